// warden::store::chunk_text — cuts a document's text into overlapping chunks for the knowledge
// base (store/knowledge_base.h): each chunk is indexed for full-text search and may be embedded.
//
// Sizes are in bytes of UTF-8 (the reference's 500 tokens with 64 overlap ≈ 2000/256 chars).
// A chunk ends at the best break inside the last fifth of its window: after a paragraph break
// (a blank line), else after a sentence end ('.', '!', '?' or '。' followed by whitespace), else
// at whitespace; with none there it is cut at the window's end. A UTF-8 sequence is never split
// (a chunk may then be a few bytes longer or shorter than the window). The next chunk starts
// about overlap_chars before the previous one ended, moved forward to the start of a word when
// one begins within the overlap. Chunks are trimmed of ASCII whitespace at both ends; text that
// is empty or only whitespace gives no chunks. Invalid UTF-8 is kept byte for byte.
//
// Limits: chunk_chars 0 is taken as 1; overlap_chars is capped at chunk_chars / 2, so each chunk
// starts at least about 3/10 of chunk_chars after the previous one (always at least one byte).
// Cost: linear in the text's size (only the window and the overlap are searched for breaks).
// Thread-safety: a pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace warden::store {

/// The chunks of `text`, in order (see above).
std::vector<std::string> chunk_text(std::string_view text, std::size_t chunk_chars = 2000,
                                    std::size_t overlap_chars = 256);

}  // namespace warden::store
