#include "framework/mutate/sample.h"

#include <algorithm>
#include <map>
#include <random>

namespace tracebed::mutate {

std::vector<Mutant> sample_mutants(std::vector<Mutant> all, size_t n, uint64_t seed) {
  if (n == 0 || n >= all.size()) return all;
  std::map<Operator, std::vector<Mutant>> by_op;
  for (auto& m : all) by_op[m.op].push_back(std::move(m));
  // mt19937_64 and a Fisher-Yates of our own: std::shuffle's use of the
  // generator is the library's, and the sample must be the same anywhere.
  std::mt19937_64 rng(seed);
  for (auto& [op, list] : by_op) {
    for (size_t i = list.size(); i > 1; --i) std::swap(list[i - 1], list[rng() % i]);
  }
  std::vector<Mutant> out;
  std::map<Operator, size_t> next;
  while (out.size() < n) {
    for (auto& [op, list] : by_op) {
      if (out.size() == n) break;
      if (next[op] < list.size()) out.push_back(list[next[op]++]);
    }
  }
  // In file order again, so that one file's mutants build one after another.
  std::stable_sort(out.begin(), out.end(), [](const Mutant& a, const Mutant& b) {
    return a.file != b.file ? a.file < b.file : a.offset < b.offset;
  });
  return out;
}

}  // namespace tracebed::mutate
