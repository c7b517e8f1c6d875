#include "cli/terminal_safe_text.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/reflection.h>

namespace drip::cli {
namespace {

bool IsSafe(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == 0xc2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9f) return false;
    }
  }
  return true;
}

}  // namespace

std::string TerminalSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      out += '?';
      ++i;  // the C1 character's second byte
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void MakeTerminalSafe(google::protobuf::Message* message) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* reflection = message->GetReflection();
  const google::protobuf::Descriptor* descriptor = message->GetDescriptor();
  for (int f = 0; f < descriptor->field_count(); ++f) {
    const FieldDescriptor* field = descriptor->field(f);
    // Bytes fields (a snapshot's payload) are data, never printed as text.
    if (field->type() == FieldDescriptor::TYPE_STRING) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
          const std::string value = reflection->GetRepeatedString(*message, field, i);
          if (!IsSafe(value)) {
            reflection->SetRepeatedString(message, field, i, TerminalSafe(value));
          }
        }
      } else if (reflection->HasField(*message, field) || !field->has_presence()) {
        const std::string value = reflection->GetString(*message, field);
        if (!IsSafe(value)) reflection->SetString(message, field, TerminalSafe(value));
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
          MakeTerminalSafe(reflection->MutableRepeatedMessage(message, field, i));
        }
      } else if (reflection->HasField(*message, field)) {
        MakeTerminalSafe(reflection->MutableMessage(message, field));
      }
    }
  }
}

}  // namespace drip::cli
