// Terminal-safe text for dripctl. Names in the collector's answers come from every agent's
// hosts: process and host names, symbol names from the targets' binaries. A control byte
// among them (an escape sequence, a carriage return, a newline) would reach on-call's
// terminal as a command or forge lines of a table, so dripctl replaces each with '?'
// before anything is printed or written as JSON.
#pragma once

#include <string>
#include <string_view>

namespace google::protobuf {
class Message;
}

namespace drip::cli {

// `text` with every C0 control byte (0x00-0x1f), DEL (0x7f) and C1 control character
// (U+0080-U+009F, as UTF-8) replaced by '?'.
std::string TerminalSafe(std::string_view text);

// The same for every string field of `message`, nested messages and repeated fields
// included.
void MakeTerminalSafe(google::protobuf::Message* message);

// dripctl's --json output: indented, every non-ASCII character written as \uXXXX (valid
// JSON that parses back to the same strings) so that no byte of a C1 control such as
// U+009B, which an 8-bit terminal reads as an escape, is printed raw; bytes that are not
// UTF-8 become U+FFFD rather than throwing. JSON escapes C0 controls itself.
template <typename Json>
std::string DumpJsonForTerminal(const Json& json) {
  return json.dump(2, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace);
}

}  // namespace drip::cli
