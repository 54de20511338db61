#include "net/icmp_packet.h"

#include <cstring>

namespace gpudoctor {
namespace {

constexpr uint8_t kEchoRequestV4 = 8, kEchoReplyV4 = 0;
constexpr uint8_t kEchoRequestV6 = 128, kEchoReplyV6 = 129;
constexpr size_t kHeaderBytes = 8, kPayloadBytes = 16;

uint16_t Be16(const unsigned char* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

}  // namespace

uint16_t InternetChecksum(std::string_view data) {
  uint32_t sum = 0;
  size_t i = 0;
  for (; i + 1 < data.size(); i += 2) {
    sum += static_cast<uint32_t>(static_cast<unsigned char>(data[i]) << 8 |
                                 static_cast<unsigned char>(data[i + 1]));
  }
  if (i < data.size()) sum += static_cast<uint32_t>(static_cast<unsigned char>(data[i]) << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xffff);
}

std::string BuildEchoRequest(const EchoRequest& req) {
  std::string p(kHeaderBytes + kPayloadBytes, '\0');
  p[0] = static_cast<char>(req.v6 ? kEchoRequestV6 : kEchoRequestV4);
  p[4] = static_cast<char>(req.ident >> 8);
  p[5] = static_cast<char>(req.ident & 0xff);
  p[6] = static_cast<char>(req.seq >> 8);
  p[7] = static_cast<char>(req.seq & 0xff);
  for (int i = 0; i < 8; ++i) p[kHeaderBytes + i] = static_cast<char>(req.nonce >> (56 - 8 * i));
  if (!req.v6) {
    uint16_t c = InternetChecksum(p);
    p[2] = static_cast<char>(c >> 8);
    p[3] = static_cast<char>(c & 0xff);
  }
  return p;
}

std::optional<EchoReply> ParseEchoReply(std::string_view packet, bool v6, bool has_ip_header) {
  if (has_ip_header) {
    if (packet.empty()) return std::nullopt;
    auto first = static_cast<unsigned char>(packet[0]);
    if ((first >> 4) != 4) return std::nullopt;
    size_t ihl = static_cast<size_t>(first & 0x0f) * 4;
    if (ihl < 20 || packet.size() < ihl) return std::nullopt;
    packet.remove_prefix(ihl);
  }
  if (packet.size() < kHeaderBytes + 8) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(packet.data());
  if (p[0] != (v6 ? kEchoReplyV6 : kEchoReplyV4) || p[1] != 0) return std::nullopt;
  EchoReply r;
  r.ident = Be16(p + 4);
  r.seq = Be16(p + 6);
  for (int i = 0; i < 8; ++i) r.nonce = r.nonce << 8 | p[kHeaderBytes + i];
  return r;
}

}  // namespace gpudoctor
