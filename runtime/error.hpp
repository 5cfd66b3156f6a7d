// ember::error and its subclasses.
//
// Every check that depends on replicated metadata (shapes, axes, target maps) is
// evaluated identically on every rank, so every rank throws the same error and no
// rank is left waiting in a collective. Messages name the shapes, axes and ranks.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember {

class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A shape or extent that does not fit (broadcast mismatch, target map not summing up).
class shape_error : public error { using error::error; };
// An axis out of range for the array's rank.
class axis_error : public error { using error::error; };
// Element types that disagree across ranks or with the operation.
class type_error : public error { using error::error; };
// A value outside its domain (negative extent, wrong number of ranks, ...).
class value_error : public error { using error::error; };
// An index outside its axis (NumPy's IndexError).
class index_error : public error { using error::error; };
// Memory for an array's block (or a move's destination) could not be allocated
// on some rank; the message names the rank(s), the bytes and the shape.
class memory_error : public error { using error::error; };
// An MPI call failed; carries the MPI error string.
class communication_error : public error { using error::error; };
// A GPU is missing or a CUDA runtime, cuBLAS or cuSOLVER call failed; code() is
// the library's status value (0 when there is none, e.g. no device at all).
class device_error : public error {
 public:
  device_error(const std::string& what, int code) : error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

namespace detail {

template <class Range>
std::string shape_str(const Range& s) {
  std::ostringstream os;
  os << '(';
  bool first = true;
  for (auto v : s) {
    if (!first) os << ", ";
    os << v;
    first = false;
  }
  if (std::size(s) == 1) os << ',';
  os << ')';
  return os.str();
}

inline std::string axis_str(std::optional<int> axis) {
  return axis ? std::to_string(*axis) : std::string("none");
}

// LAPACK-style INFO: negative names an illegal argument, positive a failure.
// `where` is "ember::lapack: dgeqrf" or the like.
inline void check_info(int info, const std::string& where) {
  if (info < 0) throw value_error(where + ": argument " + std::to_string(-info) + " had an illegal value");
  if (info > 0) throw value_error(where + " failed (info " + std::to_string(info) + ")");
}
// Workspace size from a LAPACK workspace query's answer (complex routines answer
// in the real part).
template <class T>
int work_size(T w) {
  if constexpr (requires { w.real(); }) return work_size(w.real());
  else return w + 1 > T(1) ? int(w) + 1 : 1;
}

}  // namespace detail
}  // namespace ember
