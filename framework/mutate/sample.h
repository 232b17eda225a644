// A seeded sample of mutants spread over the operators: each operator's
// mutants shuffled with the seed, then taken in turn, one operator after
// another, so that the commonest operator (a constant plus one) does not
// fill the sample. The same mutants, seed and size give the same sample.
#pragma once

#include <cstdint>
#include <vector>

#include "framework/mutate/mutant.h"

namespace tracebed::mutate {

std::vector<Mutant> sample_mutants(std::vector<Mutant> all, size_t n, uint64_t seed);

}  // namespace tracebed::mutate
