#include "einsum_path.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "../planner/plan.hpp"
#include "../runtime/error.hpp"

namespace ember::contract {

namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw value_error("ember::einsum: subscripts '" + std::string(text) + "': " + why);
}

struct term {
  std::string letters;  // with '.' once where the ellipsis stands
  int named = 0;        // letters
  bool ellipsis = false;
};

term parse_term(std::string_view text, std::string_view t, const char* what) {
  term r;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '.') {
      if (r.ellipsis) bad(text, std::string(what) + " has more than one ellipsis");
      if (t.substr(i, 3) != "...") bad(text, std::string(what) + " has a '.' outside an ellipsis '...'");
      r.ellipsis = true, r.letters += '.', i += 2;
    } else if (is_letter(c)) {
      r.letters += c, ++r.named;
    } else {
      bad(text, std::string(what) + " has the character '" + std::string(1, c) + "', which is not a letter a-z or A-Z");
    }
  }
  return r;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s;
}

std::string sci(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3e", x);
  return b;
}

std::string seconds(double s) {
  char b[32];
  if (s < 1e-3) std::snprintf(b, sizeof b, "%.1f us", s * 1e6);
  else if (s < 1) std::snprintf(b, sizeof b, "%.2f ms", s * 1e3);
  else std::snprintf(b, sizeof b, "%.2f s", s);
  return b;
}

}  // namespace

std::string subscripts::text() const { return joined(inputs) + "->" + output; }
std::string contraction_step::text() const { return a + "," + b + "->" + result; }

subscripts parse_subscripts(std::string_view text_in, const std::vector<int>& ranks) {
  std::string compact;
  for (char c : text_in)
    if (c != ' ') compact += c;
  const std::string_view text = compact;
  std::string_view in = text, out;
  const auto arrow = text.find("->");
  const bool explicit_output = arrow != std::string_view::npos;
  if (explicit_output) {
    in = text.substr(0, arrow), out = text.substr(arrow + 2);
    if (out.find("->") != std::string_view::npos) bad(text, "more than one '->'");
  }
  if (in.find_first_of("->") != std::string_view::npos || out.find_first_of("->") != std::string_view::npos)
    bad(text, "a '-' or '>' outside '->'");
  std::vector<term> terms;
  for (std::size_t b = 0;;) {
    const auto e = in.find(',', b);
    const std::string what = "operand " + std::to_string(terms.size());
    terms.push_back(parse_term(text, in.substr(b, e == std::string_view::npos ? e : e - b), what.c_str()));
    if (e == std::string_view::npos) break;
    b = e + 1;
  }
  if (terms.size() != ranks.size())
    bad(text, "they name " + std::to_string(terms.size()) + " operand" + (terms.size() == 1 ? "" : "s") + " but " +
                  std::to_string(ranks.size()) + " " + (ranks.size() == 1 ? "is" : "are") + " given");
  int ellipsis_rank = 0;
  std::set<char> used;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const term& t = terms[i];
    for (char c : t.letters)
      if (c != '.') used.insert(c);
    if ((!t.ellipsis && t.named != ranks[i]) || (t.ellipsis && t.named > ranks[i]))
      bad(text, "operand " + std::to_string(i) + " has " + std::to_string(ranks[i]) + " dimension" +
                    (ranks[i] == 1 ? "" : "s") + " but its subscripts '" + t.letters + "' name " +
                    std::to_string(t.named) + (t.ellipsis ? " and an ellipsis" : ""));
    if (t.ellipsis) ellipsis_rank = std::max(ellipsis_rank, ranks[i] - t.named);
  }
  // the ellipsis's dimensions: letters no subscript uses, right-aligned (broadcast) per operand
  for (char c : out)
    if (is_letter(c)) used.insert(c);
  std::string ell;
  for (const char* pool : {"ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"})
    for (const char* p = pool; *p && int(ell.size()) < ellipsis_rank; ++p)
      if (!used.count(*p)) ell += *p;
  if (int(ell.size()) < ellipsis_rank) bad(text, "the ellipsis stands for more dimensions than there are unused letters");
  subscripts s;
  std::map<char, int> count;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    std::string labels;
    for (char c : terms[i].letters) {
      if (c == '.') labels += ell.substr(ell.size() - std::size_t(ranks[i] - terms[i].named));
      else labels += c, ++count[c];
    }
    s.inputs.push_back(labels);
  }
  if (explicit_output) {
    const term o = parse_term(text, out, "the output");
    for (char c : o.letters) {
      if (c == '.') {
        s.output += ell;
        continue;
      }
      if (!count.count(c)) bad(text, "the output label '" + std::string(1, c) + "' is in no operand");
      if (s.output.find(c) != std::string::npos)
        bad(text, "the output label '" + std::string(1, c) + "' appears more than once");
      s.output += c;
    }
    if (!o.ellipsis && ellipsis_rank > 0)
      bad(text, "output has more dimensions than subscripts given in einstein sum, but no '...' ellipsis provided to "
                "broadcast the extra dimensions (" +
                    std::to_string(ellipsis_rank) + ")");
  } else {
    s.output = ell;
    for (const auto& [c, k] : count)  // std::map: ASCII order, as NumPy's implicit output
      if (k == 1) s.output += c;
  }
  return s;
}

std::int64_t einsum_plan::extent(char label) const {
  std::int64_t e = 1;
  for (std::size_t i = 0; i < shapes.size(); ++i)
    for (std::size_t d = 0; d < subs.inputs[i].size(); ++d)
      if (subs.inputs[i][d] == label) e = std::max(e, shapes[i][d]);
  return e;
}

std::vector<std::pair<int, int>> einsum_plan::path() const {
  std::vector<std::pair<int, int>> p;
  for (const auto& s : steps) p.push_back(s.pair);
  return p;
}

namespace {

struct pricing {
  std::map<char, std::int64_t> extent;
  std::string output;
  int nranks = 1;
  std::int64_t elem = 8;
  planner::cost_params cm;

  double elements(const std::string& labels) const {
    double n = 1;
    for (char c : labels) n *= double(extent.at(c));
    return n;
  }
  // tensors[i] and tensors[j] into one: the labels the output or another
  // tensor still needs are kept (those in both: a batch axis), the others summed
  contraction_step step(const std::vector<std::string>& tensors, int i, int j) const {
    if (i > j) std::swap(i, j);
    contraction_step s;
    s.pair = {i, j};
    s.a = tensors[std::size_t(i)], s.b = tensors[std::size_t(j)];
    std::set<char> kept(output.begin(), output.end());
    for (std::size_t k = 0; k < tensors.size(); ++k)
      if (int(k) != i && int(k) != j) kept.insert(tensors[k].begin(), tensors[k].end());
    std::string all = s.a, ma, nb;
    for (char c : s.b)
      if (all.find(c) == std::string::npos) all += c;
    for (char c : s.a) {
      if (s.b.find(c) == std::string::npos) ma += c;
      else if (kept.count(c)) s.batch += c;
      else s.contracted += c;
    }
    for (char c : s.b)
      if (s.a.find(c) == std::string::npos) nb += c;
    s.result = s.batch + ma + nb;
    s.flops = elements(all) * (s.contracted.empty() ? 1 : 2);
    s.result_elements = std::int64_t(elements(s.result));
    // the product's work divided over the ranks, its operands copied into the
    // product's order and its result written, and (several ranks) the smaller
    // operand travelling once
    const double P = double(nranks), ea = elements(s.a), eb = elements(s.b), er = elements(s.result);
    s.cost = cm.gamma * s.flops / P + cm.kappa * double(elem) * (ea + eb + er) / P +
             (nranks > 1 ? cm.beta * double(elem) * std::min(ea, eb) * (P - 1) / P : 0.0);
    return s;
  }
  static std::vector<std::string> after(std::vector<std::string> t, const contraction_step& s) {
    t.erase(t.begin() + s.pair.second);
    t.erase(t.begin() + s.pair.first);
    t.push_back(s.result);
    return t;
  }
};

void search(const pricing& pr, const std::vector<std::string>& tensors, std::vector<contraction_step>& cur,
            double cost, std::vector<contraction_step>& best, double& best_cost) {
  if (cost >= best_cost) return;
  if (tensors.size() == 1) {
    best = cur, best_cost = cost;
    return;
  }
  for (int i = 0; i < int(tensors.size()); ++i)
    for (int j = i + 1; j < int(tensors.size()); ++j) {
      cur.push_back(pr.step(tensors, i, j));
      search(pr, pricing::after(tensors, cur.back()), cur, cost + cur.back().cost, best, best_cost);
      cur.pop_back();
    }
}

}  // namespace

einsum_plan plan_einsum(const subscripts& subs, const std::vector<index_vec>& shapes, const einsum_options& o,
                        int nranks, std::int64_t elem) {
  einsum_plan p;
  p.subs = subs, p.shapes = shapes, p.optimize = o.optimize, p.explicit_path = !o.path.empty();
  pricing pr;
  pr.output = subs.output, pr.nranks = std::max(nranks, 1), pr.elem = elem, pr.cm = planner::cost_model();
  const std::string text = subs.text();
  // extents: one per label; 1 broadcasts against any other (NumPy)
  for (std::size_t i = 0; i < subs.inputs.size(); ++i) {
    const std::string& l = subs.inputs[i];
    for (std::size_t d = 0; d < l.size(); ++d) {
      const std::int64_t e = shapes[i][d];
      for (std::size_t d2 = 0; d2 < d; ++d2)
        if (l[d2] == l[d] && shapes[i][d2] != e)
          throw shape_error("ember::einsum: '" + text + "': the repeated label '" + std::string(1, l[d]) +
                            "' of operand " + std::to_string(i) + " (shape " + detail::shape_str(shapes[i]) +
                            ") has extents " + std::to_string(shapes[i][d2]) + " and " + std::to_string(e) +
                            " (axes " + std::to_string(d2) + " and " + std::to_string(d) + ")");
      auto [it, fresh] = pr.extent.emplace(l[d], e);
      if (!fresh && it->second != e && it->second != 1 && e != 1) {
        std::size_t first = 0;
        while (subs.inputs[first].find(l[d]) == std::string::npos) ++first;
        throw shape_error("ember::einsum: '" + text + "': operands could not be broadcast together: label '" +
                          std::string(1, l[d]) + "' has extent " + std::to_string(it->second) + " in operand " +
                          std::to_string(first) + " (shape " + detail::shape_str(shapes[first]) + ") and " +
                          std::to_string(e) + " in operand " + std::to_string(i) + " (shape " +
                          detail::shape_str(shapes[i]) + ")");
      }
      it->second = std::max(it->second, e);
    }
  }
  // each operand's own labels: repeated ones once (their diagonal), a
  // broadcast extent 1 dropped, then the ones nobody else needs summed
  std::vector<std::string> effective;
  for (std::size_t i = 0; i < subs.inputs.size(); ++i) {
    std::string e;
    for (std::size_t d = 0; d < subs.inputs[i].size(); ++d) {
      const char c = subs.inputs[i][d];
      if (e.find(c) != std::string::npos) continue;
      if (shapes[i][d] == 1 && pr.extent.at(c) > 1) continue;
      e += c;
    }
    effective.push_back(e);
  }
  for (std::size_t i = 0; i < effective.size(); ++i) {
    std::string kept;
    for (char c : effective[i]) {
      bool needed = subs.output.find(c) != std::string::npos;
      for (std::size_t k = 0; k < effective.size() && !needed; ++k)
        needed = k != i && effective[k].find(c) != std::string::npos;
      if (needed) kept += c;
    }
    p.prepared.push_back(kept);
  }
  // the order
  const int n = int(p.prepared.size());
  if (!o.path.empty()) {
    std::vector<std::string> t = p.prepared;
    for (std::size_t k = 0; k < o.path.size(); ++k) {
      const auto [i, j] = o.path[k];
      if (i < 0 || j < 0 || i >= int(t.size()) || j >= int(t.size()) || i == j)
        throw value_error("ember::einsum: '" + text + "': path step " + std::to_string(k) + " (" + std::to_string(i) +
                          ", " + std::to_string(j) + ") does not name two of the " + std::to_string(t.size()) +
                          " operands left then");
      p.steps.push_back(pr.step(t, i, j));
      t = pricing::after(t, p.steps.back());
    }
    if (t.size() != 1)
      throw value_error("ember::einsum: '" + text + "': the path leaves " + std::to_string(t.size()) +
                        " operands; it needs " + std::to_string(std::max(n - 1, 0)) + " steps");
  } else if (o.optimize == einsum_optimize::optimal && n <= 6) {
    std::vector<contraction_step> cur;
    double best_cost = std::numeric_limits<double>::infinity();
    search(pr, p.prepared, cur, 0.0, p.steps, best_cost);
  } else {
    std::vector<std::string> t = p.prepared;
    while (t.size() > 1) {
      contraction_step best = pr.step(t, 0, 1);
      if (o.optimize != einsum_optimize::none)
        for (int i = 0; i < int(t.size()); ++i)
          for (int j = i + 1; j < int(t.size()); ++j) {
            contraction_step s = pr.step(t, i, j);
            if (s.cost < best.cost || (s.cost == best.cost && s.result_elements < best.result_elements)) best = s;
          }
      p.steps.push_back(best);
      t = pricing::after(t, best);
    }
  }
  p.final_labels = p.steps.empty() ? p.prepared.at(0) : p.steps.back().result;
  std::string all;
  bool summed = false;
  for (const auto& [c, e] : pr.extent) {
    all += c;
    summed = summed || subs.output.find(c) == std::string::npos;
  }
  p.naive_flops = pr.elements(all) * double(std::max(n - 1, 0) + (summed ? 1 : 0));
  for (const auto& s : p.steps) {
    p.optimized_flops += s.flops;
    p.largest_intermediate = std::max(p.largest_intermediate, s.result_elements);
  }
  return p;
}

std::string einsum_plan::to_string() const {
  auto scaling = [](const std::string& a, const std::string& b) {
    std::set<char> s(a.begin(), a.end());
    s.insert(b.begin(), b.end());
    return s.size();
  };
  std::set<char> all;
  for (const auto& l : subs.inputs) all.insert(l.begin(), l.end());
  std::size_t opt_scaling = 0;
  for (const auto& s : steps) opt_scaling = std::max(opt_scaling, scaling(s.a, s.b));
  const char* how = explicit_path                             ? "the given path"
                    : optimize == einsum_optimize::none       ? "left to right"
                    : optimize == einsum_optimize::greedy ||
                              subs.inputs.size() > 6          ? "greedy"
                                                              : "optimal";
  std::string r;
  r += "  Complete contraction:  " + subs.text() + "\n";
  r += "         Naive scaling:  " + std::to_string(all.size()) + "\n";
  r += "     Optimized scaling:  " + std::to_string(opt_scaling) + "\n";
  r += "      Naive FLOP count:  " + sci(naive_flops) + "\n";
  r += "  Optimized FLOP count:  " + sci(optimized_flops) + "\n";
  char b[64];
  std::snprintf(b, sizeof b, "%.3f", optimized_flops > 0 ? naive_flops / optimized_flops : 1.0);
  r += "   Theoretical speedup:  " + std::string(b) + "\n";
  r += "  Largest intermediate:  " + sci(double(largest_intermediate)) + " elements\n";
  r += "                 Order:  " + std::string(how) + "\n";
  r += std::string(90, '-') + "\n";
  char head[160];
  std::snprintf(head, sizeof head, "%-8s %-8s %24s %34s %12s\n", "step", "scaling", "current", "remaining", "predicted");
  r += head;
  r += std::string(90, '-') + "\n";
  std::vector<std::string> t = prepared;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const auto& s = steps[k];
    t.erase(t.begin() + s.pair.second);
    t.erase(t.begin() + s.pair.first);
    t.push_back(s.result);
    const std::string rest = joined(t) + "->" + subs.output;
    char line[256];
    std::snprintf(line, sizeof line, "%-8s %-8zu %24s %34s %12s\n",
                  ("(" + std::to_string(s.pair.first) + ", " + std::to_string(s.pair.second) + ")").c_str(),
                  scaling(s.a, s.b), s.text().c_str(), rest.c_str(), seconds(s.cost).c_str());
    r += line;
  }
  if (final_labels != subs.output) r += "then " + final_labels + "->" + subs.output + "\n";
  return r;
}

}  // namespace ember::contract
