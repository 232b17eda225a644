// UTF-8 well-formedness, for writers of text other programs parse (JUnit
// XML, KTAP, HTML) from bytes a guest printed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tracebed::base {

// The length of the well-formed UTF-8 character `s` starts with (1 to 4),
// or 0 when it starts with a byte that cannot begin one, a truncated
// sequence, an overlong form or a surrogate (RFC 3629, section 4).
size_t utf8_char_length(std::string_view s);

// `s` with every byte that is not part of a well-formed UTF-8 character
// replaced by U+FFFD: console excerpts carry whatever the guest printed,
// and XML and HTML readers refuse ill-formed text.
std::string valid_utf8(std::string_view s);

}  // namespace tracebed::base
