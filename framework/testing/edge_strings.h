// Strings for tests of string fetches and fields: texts that say where
// their bytes are, at the lengths where a copy goes wrong.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tracebed::testlib {

// n bytes that say where they are, different for each seed: a string cut,
// shifted or swapped with its neighbour shows. Letters and digits only
// (no '/', quote or blank), so any of them is a file name or an argument.
inline std::string text_of(size_t n, size_t seed) {
  static constexpr std::string_view kChars = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s(n, '.');
  for (size_t i = 0; i < n; ++i) s[i] = kChars[(i * 7 + seed * 11 + i / kChars.size()) % kChars.size()];
  return s;
}

// 110 texts: the lengths at the edges (0, 1, 15/16/17 around two 8-byte
// words, 63/64, 255/256, 4000 near a page), then 100 more spread over
// 0..299, each with its own seed.
inline std::vector<std::string> texts_of_every_length() {
  static constexpr size_t kEdges[] = {0, 1, 15, 16, 17, 63, 64, 255, 256, 4000};
  std::vector<std::string> out;
  size_t seed = 0;
  for (size_t n : kEdges) out.push_back(text_of(n, seed++));
  for (size_t i = 0; i < 100; ++i) out.push_back(text_of(i * 37 % 300, seed++));
  return out;
}

}  // namespace tracebed::testlib
