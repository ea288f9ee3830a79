// LlmStopStrings: text that might begin a stop string is held back, the text ends before the
// earliest match (also one split over many pushes), and nothing of a stop string leaks out.
#include "models/stop_strings.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace stop_strings_test {

namespace {

using kiln::models::StopStrings;

TEST(LlmStopStrings, HoldsBackPrefixesAndCutsAtTheEarliestMatch) {
  StopStrings s({"\nUser:", "END"}, "llm.generate");
  EXPECT_EQ(s.push("Hello"), "Hello");
  EXPECT_EQ(s.push(" wor"), " wor");
  EXPECT_EQ(s.push("ld\nUs"), "ld");  // "\nUs" may begin "\nUser:"
  EXPECT_EQ(s.push("e"), "");
  EXPECT_EQ(s.push("ful"), "\nUseful");  // it did not
  EXPECT_EQ(s.push("E"), "");
  EXPECT_EQ(s.push("N"), "");
  EXPECT_FALSE(s.stopped());
  EXPECT_EQ(s.push("D tail\nUser: more"), "");  // "END" completes first
  EXPECT_TRUE(s.stopped());
  EXPECT_EQ(s.push("later"), "");
  EXPECT_EQ(s.flush(), "");
}

TEST(LlmStopStrings, EarliestOfSeveralAndFlush) {
  StopStrings s({"cd", "b"}, "llm.generate");
  EXPECT_EQ(s.push("abcd"), "a");  // "b" starts before "cd"
  StopStrings t({"xyz"}, "llm.generate");
  EXPECT_EQ(t.push("axy"), "a");
  EXPECT_EQ(t.flush(), "xy");  // the stream ended inside a prefix
  StopStrings none({}, "llm.generate");
  EXPECT_EQ(none.push("abc"), "abc");
  EXPECT_THROW(StopStrings({"a", ""}, "llm.generate"), kiln::Error);
}

}  // namespace

}  // namespace stop_strings_test
