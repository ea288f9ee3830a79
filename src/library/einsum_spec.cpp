// einsum subscripts: split into terms, each term into letters and at most one ellipsis,
// then labels per axis, the output (explicit or NumPy's implicit order) and size checks.
#include "library/einsum_spec.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "ir/error.h"

namespace kiln::numpy::detail {

namespace {

struct Term {
  std::vector<int> labels;  // letters as their character codes
  bool ellipsis = false;
  size_t ellipsis_at = 0;  // position of "..." among the letters
};

Term parse_term(const std::string& term, const std::string& subscripts) {
  Term t;
  for (size_t i = 0; i < term.size();) {
    const char c = term[i];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      t.labels.push_back(c);
      i++;
    } else if (c == '.') {
      if (term.compare(i, 3, "...") != 0)
        fail("einsum", "got subscripts '", subscripts,
             "' with a '.' outside an ellipsis, expected '...'");
      if (t.ellipsis)
        fail("einsum", "got subscripts '", subscripts, "' with two ellipses in the term '", term,
             "', expected at most one per term");
      t.ellipsis = true;
      t.ellipsis_at = t.labels.size();
      i += 3;
    } else {
      fail("einsum", "got invalid character '", c, "' in subscripts '", subscripts,
           "', expected letters, ',', '->' and '...'");
    }
  }
  return t;
}

std::vector<int> iota(int from, int n) {
  std::vector<int> v(size_t(std::max(n, 0)));
  for (int i = 0; i < n; i++) v[size_t(i)] = from + i;
  return v;
}

bool has(const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); }

std::string shape_text(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

// The output labels: explicit after '->', else NumPy's implicit order (ellipsis axes, then
// letters used exactly once, in ASCII order).
std::vector<int> output_labels(const std::vector<Term>& terms, const Term& out_term,
                               bool explicit_out, size_t n_ell, bool any_ell,
                               const std::string& subscripts) {
  std::map<int, int> count;
  for (auto& t : terms)
    for (int l : t.labels) count[l]++;
  std::vector<int> out;
  if (!explicit_out) {
    if (any_ell) out = iota(kEinsumEllipsis, int(n_ell));
    for (auto [l, c] : count)
      if (c == 1) out.push_back(l);
    return out;
  }
  for (int l : out_term.labels) {
    if (!count.count(l))
      fail("einsum", "output subscript '", char(l), "' in '", subscripts,
           "' does not appear in the inputs");
    if (has(out, l))
      fail("einsum", "output subscript '", char(l), "' appears twice in '", subscripts,
           "', expected each at most once");
    out.push_back(l);
  }
  if (out_term.ellipsis) {
    std::vector<int> ell = iota(kEinsumEllipsis, int(n_ell));
    out.insert(out.begin() + long(out_term.ellipsis_at), ell.begin(), ell.end());
  }
  return out;
}

}  // namespace

std::string einsum_label_name(int l) {
  return l >= kEinsumEllipsis ? "..." : std::string(1, char(l));
}

EinsumSpec parse_einsum(const std::string& subscripts,
                        const std::vector<std::vector<int64_t>>& shapes) {
  std::string s;
  for (char c : subscripts)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  if (shapes.empty()) fail("einsum", "got no operands, expected at least one");
  const size_t arrow = s.find("->");
  const bool explicit_out = arrow != std::string::npos;
  const std::string in_str = explicit_out ? s.substr(0, arrow) : s;
  const std::string out_str = explicit_out ? s.substr(arrow + 2) : "";
  std::vector<std::string> term_strs{""};
  for (char c : in_str) {
    if (c == ',')
      term_strs.emplace_back();
    else
      term_strs.back() += c;
  }
  if (term_strs.size() != shapes.size())
    fail("einsum", "subscripts '", subscripts, "' name ", term_strs.size(), " operands, but got ",
         shapes.size(), " arrays");
  std::vector<Term> terms;
  for (auto& t : term_strs) terms.push_back(parse_term(t, subscripts));
  Term out_term = parse_term(out_str, subscripts);  // rejects a second "->" ('-', '>')

  size_t n_ell = 0;
  bool any_ell = false;
  for (size_t i = 0; i < terms.size(); i++) {
    const size_t nl = terms[i].labels.size(), r = shapes[i].size();
    if ((!terms[i].ellipsis && r != nl) || (terms[i].ellipsis && r < nl))
      fail("einsum", "operand ", i, " has shape ", shape_text(shapes[i]), " (rank ", r,
           ") but its subscripts '", term_strs[i], "' name ", nl, " axes",
           terms[i].ellipsis ? " plus '...'" : "");
    if (terms[i].ellipsis) n_ell = std::max(n_ell, r - nl), any_ell = true;
  }
  // Ellipsis axes broadcast right-aligned, as NumPy's do.
  EinsumSpec spec;
  for (size_t i = 0; i < terms.size(); i++) {
    std::vector<int> l = terms[i].labels;
    if (terms[i].ellipsis) {
      size_t e = shapes[i].size() - l.size();
      std::vector<int> ell = iota(kEinsumEllipsis + int(n_ell - e), int(e));
      l.insert(l.begin() + long(terms[i].ellipsis_at), ell.begin(), ell.end());
    }
    spec.labels.push_back(l);
  }
  spec.out = output_labels(terms, out_term, explicit_out, n_ell, any_ell, subscripts);

  std::map<int, int64_t> size;
  for (size_t i = 0; i < spec.labels.size(); i++) {
    std::map<int, int64_t> own;
    for (size_t k = 0; k < spec.labels[i].size(); k++) {
      const int l = spec.labels[i][k];
      const int64_t d = shapes[i][k];
      auto [it, fresh] = own.emplace(l, d);
      if (!fresh && it->second != d)
        fail("einsum", "subscript '", einsum_label_name(l), "' repeats in operand ", i,
             " of shape ", shape_text(shapes[i]), " with sizes ", it->second, " and ", d,
             ", expected equal sizes for a diagonal");
      auto [jt, fresh2] = size.emplace(l, d);
      if (!fresh2 && jt->second != d && jt->second != 1 && d != 1)
        fail("einsum", "subscript '", einsum_label_name(l), "' has size ", d, " in operand ", i,
             " of shape ", shape_text(shapes[i]), " but ", jt->second,
             " in an earlier operand, expected equal sizes (or 1)");
      if (!fresh2 && jt->second == 1) jt->second = d;
    }
  }
  return spec;
}

}  // namespace kiln::numpy::detail
