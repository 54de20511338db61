// Streaming line reads through the root-prefixed filesystem layer (root_fs.h), for files too big
// to hold whole in a long-running process (apt's Packages lists, dpkg's status: about 1 MiB each).
// Kept apart from root_fs.h so that adding it does not recompile every probe.
// Thread-safety: a free function with no shared state; safe concurrently.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gpudoctor {

// Calls fn(chunk) for the first max_bytes bytes of `path`, read chunk_bytes at a time into one
// heap buffer (a chunk is valid only during that call); fn returns false to stop reading.
// *reached_end (when given) says whether the file's end was read (not a bound or fn's stop).
// Errors (the open or a read failing) name the path: not_found, permission_denied, io_error;
// chunks already passed to fn stay passed. The one read loop of the layer's file readers.
Status ForEachFileChunk(const std::string& path, size_t max_bytes, size_t chunk_bytes,
                        const std::function<bool(std::string_view chunk)>& fn,
                        bool* reached_end = nullptr);

// Calls fn(line) for every line of the first max_bytes bytes of `path`, reading it in chunks of
// chunk_bytes (one heap buffer of that size) instead of whole. The lines are exactly those
// SplitLines(RootFs::ReadFile(path, max_bytes)) gives: split at '\n', one trailing '\r' removed,
// a last line without '\n' included (also when max_bytes cut it). A line that spans two chunks is
// assembled in a side string (as long as the line, bounded by max_bytes). fn returns false to
// stop reading. A line passed to fn is valid only during that call.
// Errors (the open or a read failing): not_found, permission_denied, io_error; lines already
// passed to fn stay passed.
Status ForEachFileLine(const std::string& path, size_t max_bytes,
                       const std::function<bool(std::string_view line)>& fn,
                       size_t chunk_bytes = 64u << 10);

}  // namespace gpudoctor
