#include "broadcast.hpp"

namespace ember::detail {

void check_root(const communicator& c, int root, const char* what) {
  // `root` is an argument every rank passes alike; a bad one is the same error everywhere.
  // With EMBER_CHECK_REPLICATED, first that every rank names the same root.
  check_replicated(c, std::uint64_t(std::int64_t(root)), (std::string("ember::") + what).c_str(), "root",
                   [&] { return "root " + std::to_string(root); });
  if (root < 0 || root >= c.size())
    throw value_error(std::string("ember::") + what + ": root " + std::to_string(root) +
                      " is not a rank of a communicator of " + std::to_string(c.size()) + " ranks");
}

void check_bcast_counts(const communicator& c, std::int64_t n, int root, const char* what) {
  const auto all = c.allgather(n);
  std::string bad;
  for (int r = 0; r < c.size(); ++r)
    if (all[std::size_t(r)] != all[std::size_t(root)])
      bad += (bad.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) + " has " +
             std::to_string(all[std::size_t(r)]);
  if (!bad.empty())
    throw shape_error(std::string("ember::") + what + ": the root (rank " + std::to_string(root) + ") sends " +
                      std::to_string(all[std::size_t(root)]) + " elements but " + bad +
                      " (a fixed-size buffer must match the root's; a std::vector is resized)");
}

}  // namespace ember::detail
