// A C file read as tokens, enough to mutate it one token at a time: the
// comments, string and character literals and preprocessor lines (macro
// bodies with their continuations) are left out, and each token knows the
// function whose body it is in, if any. Not a C parser: it needs only to
// tell code from everything else and find function bodies by their braces.
//
//   CSource src = CSource::parse(text);
//   for (const Token& t : src.tokens) if (t.function == "ring_buffer_write") ...
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tracebed::mutate {

enum class TokenKind { identifier, number, punctuator };

struct Token {
  TokenKind kind;
  std::string text;
  size_t offset = 0;     // byte offset in the file
  size_t line = 0;       // 1-based
  std::string function;  // the function whose body holds it; empty outside one
  int depth = 0;         // brace depth (1: a function body's top level)
};

struct CSource {
  std::string text;
  std::vector<Token> tokens;
  static CSource parse(std::string text);
  // The whole line the byte offset is on, without its newline.
  std::string_view line_at(size_t offset) const;
};

}  // namespace tracebed::mutate
