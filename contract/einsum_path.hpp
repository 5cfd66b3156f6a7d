// Einstein summation's subscripts and contraction order, as pure functions (no
// MPI: testable and printable on their own, like the planner).
//
//   parse_subscripts("ij,jk->ik", {2, 2})   the labels of each operand and of the
//                                          result (NumPy's rules: "..." broadcast
//                                          dimensions, implicit output in ASCII order)
//   plan_einsum(subs, shapes, options, P)  the pairwise contraction order, each
//                                          step's subscripts, flops and predicted cost
//   plan.to_string()                       the report numpy.einsum_path prints
//
// A label is a letter, a-z or A-Z. The dimensions an ellipsis stands for get
// letters no operand uses, as NumPy does inside einsum, so every later stage
// sees letters only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../runtime/layout.hpp"

namespace ember {

// How einsum orders its pairwise contractions (NumPy's `optimize`):
// optimal searches every order (at most 6 operands; greedy beyond), greedy takes
// the cheapest pair at each step, none contracts left to right.
enum class einsum_optimize { optimal, greedy, none };
struct einsum_options {
  einsum_optimize optimize = einsum_optimize::optimal;
  // An explicit order, NumPy's path: each pair indexes the current operand list,
  // whose two operands are removed and their product appended at the end.
  std::vector<std::pair<int, int>> path{};
};

namespace contract {

struct subscripts {
  std::vector<std::string> inputs;  // one label per axis of each operand
  std::string output;               // the result's labels
  std::string text() const;         // "ij,jk->ik" (ellipses written out as their letters)
};

// Throws value_error naming the subscripts and the operand for malformed text,
// a rank that does not match, or an output label that is repeated or unknown.
subscripts parse_subscripts(std::string_view text, const std::vector<int>& ranks);

// One pairwise contraction: operands `pair` of the current list (NumPy's path
// convention), with these labels, into `result`.
struct contraction_step {
  std::pair<int, int> pair;
  std::string a, b, result;
  std::string batch, contracted;  // labels in both kept (a stack axis), in both summed (the product's k)
  double flops = 0;               // NumPy's count: the product's elements times 2 when a label is summed
  std::int64_t result_elements = 0;
  double cost = 0;  // predicted seconds (cost_model: gamma, kappa, beta)
  std::string text() const;  // "ij,jk->ik"
};

struct einsum_plan {
  subscripts subs;
  std::vector<index_vec> shapes;  // the operands'
  // Each operand's labels once its own work is done: a repeated label's
  // diagonal taken, labels no other operand or the output has summed (in order).
  std::vector<std::string> prepared;
  std::vector<contraction_step> steps;
  std::string final_labels;  // the last tensor's labels before the permutation into `output`
  double naive_flops = 0, optimized_flops = 0;
  std::int64_t largest_intermediate = 0;
  einsum_optimize optimize = einsum_optimize::optimal;
  bool explicit_path = false;
  std::int64_t extent(char label) const;
  std::vector<std::pair<int, int>> path() const;
  std::string to_string() const;  // numpy.einsum_path's report, plus each step's predicted cost
};

// Extents are checked (each label one extent, 1 broadcasting as NumPy does);
// shape_error names the label, operands and extents. `nranks` and `elem`
// (bytes per element) price the steps.
einsum_plan plan_einsum(const subscripts& subs, const std::vector<index_vec>& shapes, const einsum_options& o,
                        int nranks, std::int64_t elem);

// The result's rank, at compile time (einsum<"ij,jk->ik">); -1 when the text is
// malformed (parse_subscripts then says why).
constexpr int output_rank(std::string_view s, const int* ranks, int n) {
  std::string_view in = s, out;
  bool arrow = false;
  for (std::size_t i = 0; i + 1 < s.size(); ++i)
    if (s[i] == '-' && s[i + 1] == '>') {
      in = s.substr(0, i), out = s.substr(i + 2), arrow = true;
      break;
    }
  auto is_letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  int counts[128] = {};
  int ellipsis = 0, term = 0, letters = 0;
  bool has_ellipsis = false;
  auto end_term = [&]() {
    if (term >= n) return false;
    if (has_ellipsis) {
      if (ranks[term] < letters) return false;
      ellipsis = ranks[term] - letters > ellipsis ? ranks[term] - letters : ellipsis;
    } else if (ranks[term] != letters) {
      return false;
    }
    ++term, letters = 0, has_ellipsis = false;
    return true;
  };
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == ' ') continue;
    if (c == ',') {
      if (!end_term()) return -1;
    } else if (c == '.') {
      if (i + 2 >= in.size() || in[i + 1] != '.' || in[i + 2] != '.' || has_ellipsis) return -1;
      has_ellipsis = true, i += 2;
    } else if (is_letter(c)) {
      ++counts[int(c)], ++letters;
    } else {
      return -1;
    }
  }
  if (!end_term() || term != n) return -1;
  int r = 0;
  bool out_ellipsis = false;
  if (!arrow) {
    r = ellipsis;
    for (int c = 0; c < 128; ++c) r += counts[c] == 1 ? 1 : 0;
    return r;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (i + 2 >= out.size() || out[i + 1] != '.' || out[i + 2] != '.') return -1;
      r += ellipsis, i += 2, out_ellipsis = true;
    } else if (is_letter(c)) {
      if (counts[int(c)] == 0) return -1;
      ++r;
    } else {
      return -1;
    }
  }
  return ellipsis > 0 && !out_ellipsis ? -1 : r;
}

}  // namespace contract
}  // namespace ember
