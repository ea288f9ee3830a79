#!/usr/bin/env python3
"""Tests of tools/api_docs.py's reading of headers: which declarations are public, and which
comment documents which (the rule in its docstring). Run by `make test-docs`."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api_docs  # noqa: E402

HEADER = """\
// The file's introduction.
#pragma once
#include <functional>

namespace kiln::demo {

// ---- creation ----
// Two overloads documented by one comment.
int one(int x);
int one(double x);

int bare(int x);
int trailing(int x);  // said here
// A multi-line declaration.
int multi(int a,
          int b);
int multi_trailing(int a,
                   int b);  // said on its last line

// A class.
class Widget {
 public:
  Widget() = default;  // empty
  explicit Widget(int n) : n_(n) {}
  int size() const { return n_; }
  Widget(const Widget&) = delete;
  std::function<int(const Widget&)> callback;
  struct Impl;

 private:
  int hidden() const;
  int n_ = 0;
};

struct Plain {
  int field;
};

using Alias = int;
using other::imported;
constexpr int kLimit = 3;

namespace detail {
int internal_helper();
}  // namespace detail

template <typename T>
  requires(sizeof(T) > 1)
T templated(T x) {
  return x;
}

}  // namespace kiln::demo
"""


class ApiDocsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        os.makedirs(os.path.join(cls.tmp.name, "src"))
        with open(os.path.join(cls.tmp.name, "src/demo.h"), "w", encoding="utf-8") as fh:
            fh.write(HEADER)
        cls.hdr = api_docs.parse_header("src/demo.h", cls.tmp.name)
        cls.by_name = {}
        for d in cls.hdr.decls:
            cls.by_name.setdefault(d.name, []).append(d)

    def doc(self, name, i=0):
        return self.by_name["kiln::demo::" + name][i].doc

    def test_intro_and_sections(self):
        self.assertEqual(self.hdr.intro, "The file's introduction.")
        self.assertEqual(self.by_name["kiln::demo::one"][0].section, "creation")

    def test_group_comment_documents_adjacent_declarations(self):
        self.assertEqual(self.doc("one", 0), "Two overloads documented by one comment.")
        self.assertEqual(self.doc("one", 1), "Two overloads documented by one comment.")

    def test_blank_line_ends_a_group_and_trailing_comments_count(self):
        self.assertEqual(self.doc("bare"), "")
        self.assertEqual(self.doc("trailing"), "said here")
        self.assertEqual(self.doc("multi"), "A multi-line declaration.")
        self.assertEqual(self.doc("multi_trailing"), "said on its last line")

    def test_class_comment_does_not_document_members(self):
        self.assertEqual(self.doc("Widget"), "A class.")
        ctors = self.by_name["kiln::demo::Widget::Widget"]
        self.assertEqual([c.doc for c in ctors], ["empty", ""])
        self.assertEqual(self.doc("Widget::size"), "")

    def test_what_is_not_public(self):
        names = set(self.by_name)
        for hidden in ("Widget::hidden", "Widget::n_", "Widget::Impl", "detail::internal_helper",
                       "imported", "Widget::callback"):
            self.assertNotIn("kiln::demo::" + hidden, {n for n in names if self.by_name[n][0].checked})
        self.assertEqual(len(self.by_name["kiln::demo::Widget::Widget"]), 2)  # the deleted one is not listed
        self.assertEqual(self.by_name["kiln::demo::Plain::field"][0].kind, "field")

    def test_kinds(self):
        kinds = {n.split("::")[-1]: ds[0].kind for n, ds in self.by_name.items()}
        self.assertEqual(kinds["Alias"], "alias")
        self.assertEqual(kinds["kLimit"], "constant")
        self.assertEqual(kinds["Plain"], "struct")
        self.assertEqual(kinds["templated"], "function")

    def test_undocumented_lists_exactly_the_bare_ones(self):
        missing = sorted(d.name.split("::", 2)[2] for d in api_docs.undocumented([self.hdr]))
        self.assertEqual(missing, ["Alias", "Plain", "Widget::Widget", "Widget::size", "bare", "kLimit",
                                   "templated"])

    def test_bodies_and_initializers_are_elided(self):
        self.assertEqual(self.by_name["kiln::demo::Widget::Widget"][1].text, "explicit Widget(int n);")
        self.assertTrue(self.by_name["kiln::demo::templated"][0].text.endswith("T templated(T x);"))


if __name__ == "__main__":
    unittest.main()
