// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// libFuzzer target: the ICRC (IBA A17.3.3) and the CRC-32 under it.
// mrxe_icrc() is compared with a bitwise CRC-32 over the pseudo packet the
// annex defines (8 bytes of 0xff for the LRH, then the IPv4/IPv6 header,
// UDP header and BTH with their variant fields set to ones, then the
// payload), written here from the spec rather than from mrxe_wire.c.  Then:
// changing a variant field keeps the ICRC, flipping any one covered bit
// changes it (a CRC-32 catches every single-bit error).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <vector>

#include "fuzz_check.h"

extern "C" {
#include "mrxe_wire.h"
}

namespace {

u32 crc32_bitwise(const std::vector<u8> &b)
{
	u32 c = 0xffffffff;

	for (u8 x : b) {
		c ^= x;
		for (int i = 0; i < 8; i++)
			c = (c >> 1) ^ (0xedb88320 & (0u - (c & 1)));
	}
	return ~c;
}

// Byte i of the L3+UDP+BTH prefix is variant (masked to ones)?
bool variant_bit(bool ipv6, u32 i, u32 bit)
{
	u32 l3 = ipv6 ? MRXE_IPV6_HDR_LEN : MRXE_IPV4_HDR_LEN;

	if (i < l3) {
		if (ipv6)	// traffic class (bits 4..11), flow label (12..31), hop limit
			return (i == 0 && bit >= 4) || i == 1 || i == 2 || i == 3 || i == 7;
		return i == 1 || i == 8 || i == 10 || i == 11; // TOS, TTL, checksum
	}
	i -= l3;
	if (i < MRXE_UDP_HDR_LEN)
		return i == 6 || i == 7;	// UDP checksum
	i -= MRXE_UDP_HDR_LEN;
	return i == 4;				// BTH resv8a (FECN/BECN)
}

u32 icrc_reference(bool ipv6, const std::vector<u8> &pkt)
{
	u32 pre = (ipv6 ? MRXE_IPV6_HDR_LEN : MRXE_IPV4_HDR_LEN) +
		  MRXE_UDP_HDR_LEN + MRXE_BTH_LEN;
	std::vector<u8> v(8, 0xff);

	for (u32 i = 0; i < pkt.size(); i++) {
		u8 x = pkt[i];

		if (i < pre)
			for (u32 b = 0; b < 8; b++)
				if (variant_bit(ipv6, i, b))
					x |= (u8)(0x80 >> b);
		v.push_back(x);
	}
	return crc32_bitwise(v);
}

u32 icrc_of(bool ipv6, const std::vector<u8> &pkt)
{
	u32 l3 = ipv6 ? MRXE_IPV6_HDR_LEN : MRXE_IPV4_HDR_LEN;
	// exact-size copies, so ASan sees any read past a header
	std::vector<u8> h3(pkt.begin(), pkt.begin() + l3);
	std::vector<u8> udp(pkt.begin() + l3, pkt.begin() + l3 + MRXE_UDP_HDR_LEN);
	std::vector<u8> bth(pkt.begin() + l3 + MRXE_UDP_HDR_LEN, pkt.end());

	return mrxe_icrc(h3.data(), ipv6, udp.data(), bth.data(), (u32)bth.size());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzedDataProvider fdp(data, size);
	bool ipv6 = fdp.ConsumeBool();
	u32 flip = fdp.ConsumeIntegral<u32>();
	u32 pre = (ipv6 ? MRXE_IPV6_HDR_LEN : MRXE_IPV4_HDR_LEN) +
		  MRXE_UDP_HDR_LEN + MRXE_BTH_LEN;
	std::vector<u8> pkt = fdp.ConsumeRemainingBytes<u8>();

	if (pkt.size() < pre || pkt.size() > 9000)
		return 0;
	// table CRC == bitwise CRC on the raw bytes
	{
		u32 t = ~mrxe_crc32_le(~0u, pkt.data(), pkt.size());
		FUZZ_CHECK(t == crc32_bitwise(pkt));
	}
	u32 icrc = icrc_of(ipv6, pkt);
	FUZZ_CHECK(icrc == icrc_reference(ipv6, pkt));
	// the wire field round-trips
	u8 f[4];
	mrxe_icrc_put(f, icrc);
	FUZZ_CHECK(mrxe_icrc_get(f) == icrc);

	u32 byte = (flip >> 3) % pkt.size(), bit = flip & 7;
	std::vector<u8> m = pkt;
	m[byte] ^= (u8)(0x80 >> bit);
	if (byte < pre && variant_bit(ipv6, byte, bit))
		FUZZ_CHECK(icrc_of(ipv6, m) == icrc);
	else
		FUZZ_CHECK(icrc_of(ipv6, m) != icrc);
	return 0;
}
