// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Data patterns for mrxe-verify.  Header-only so tests/unit can test it.
//
// A pattern is a pure function of (seed, byte index): byte i of a message is
// byte (i % 8) of splitmix64(seed + (i / 8) * golden).  The seed mixes the
// operation, message size, iteration and direction, and the index is the
// offset inside the message, so a byte that lands at the wrong offset, a
// stale byte from an earlier iteration or a byte from another operation all
// fail the check (barring a 1/256 coincidence per byte, which cannot hold for
// a whole misplaced run).
#ifndef MRXE_VERIFY_PATTERN_H
#define MRXE_VERIFY_PATTERN_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mrxe_verify {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;

constexpr uint64_t splitmix64(uint64_t x)
{
	x += kGolden;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

constexpr uint64_t case_seed(uint32_t op, uint64_t size, uint32_t iter,
			     uint32_t salt)
{
	return splitmix64(splitmix64(splitmix64(op ^ (uint64_t)salt << 32) ^
				     size) ^ iter);
}

// Seed of the canary written around a destination region.
constexpr uint64_t canary_seed(uint64_t seed)
{
	return splitmix64(seed ^ 0xc0ffee00deadbeefull);
}

constexpr uint8_t pattern_byte(uint64_t seed, uint64_t index)
{
	return (uint8_t)(splitmix64(seed + (index >> 3) * kGolden) >>
			 ((index & 7) * 8));
}

// Fill p[0..len) with bytes index0 .. index0+len-1 of the pattern.
inline void fill_pattern(uint8_t *p, size_t len, uint64_t seed,
			 uint64_t index0 = 0)
{
	uint64_t i = index0;
	size_t n = 0;

	while (n < len && (i & 7)) {
		p[n++] = pattern_byte(seed, i++);
	}
	while (len - n >= 8) {
		uint64_t w = splitmix64(seed + (i >> 3) * kGolden);
		std::memcpy(p + n, &w, 8);	// little-endian byte order
		n += 8;
		i += 8;
	}
	while (n < len)
		p[n++] = pattern_byte(seed, i++);
}

struct Mismatch {
	bool ok = true;
	uint64_t first_bad = 0;		// offset from p
	uint8_t expected = 0;
	uint8_t actual = 0;
	uint64_t nbad = 0;
};

// Compare p[0..len) with pattern bytes index0.. ; count every bad byte.
inline Mismatch check_pattern(const uint8_t *p, size_t len, uint64_t seed,
			      uint64_t index0 = 0)
{
	Mismatch m;
	uint64_t i = index0;
	size_t n = 0;

	auto bad = [&](size_t off, uint8_t exp, uint8_t act) {
		if (m.ok) {
			m.ok = false;
			m.first_bad = off;
			m.expected = exp;
			m.actual = act;
		}
		m.nbad++;
	};

	while (n < len && (i & 7)) {
		uint8_t e = pattern_byte(seed, i);
		if (p[n] != e)
			bad(n, e, p[n]);
		n++;
		i++;
	}
	while (len - n >= 8) {
		uint64_t w = splitmix64(seed + (i >> 3) * kGolden), a;
		std::memcpy(&a, p + n, 8);
		if (a != w) {
			for (unsigned b = 0; b < 8; b++) {
				uint8_t e = (uint8_t)(w >> (8 * b));
				if (p[n + b] != e)
					bad(n + b, e, p[n + b]);
			}
		}
		n += 8;
		i += 8;
	}
	for (; n < len; n++, i++) {
		uint8_t e = pattern_byte(seed, i);
		if (p[n] != e)
			bad(n, e, p[n]);
	}
	return m;
}

// Where a destination-side check failed.
struct RegionCheck {
	Mismatch m;
	const char *where = "region";	// "region", "guard-before", "guard-after"
};

// Layout on the destination side: the canary covers
// [doff - guard, doff + size + guard) and the message lands at doff.
inline void prepare_destination(uint8_t *buf, uint64_t doff, uint64_t size,
				uint64_t guard, uint64_t seed)
{
	fill_pattern(buf + doff - guard, size + 2 * guard, canary_seed(seed));
}

inline RegionCheck check_destination(const uint8_t *buf, uint64_t doff,
				     uint64_t size, uint64_t guard,
				     uint64_t seed)
{
	RegionCheck r;
	uint64_t cs = canary_seed(seed);

	r.m = check_pattern(buf + doff, size, seed);
	if (!r.m.ok)
		return r;
	r.m = check_pattern(buf + doff - guard, guard, cs, 0);
	if (!r.m.ok) {
		r.where = "guard-before";
		return r;
	}
	r.m = check_pattern(buf + doff + size, guard, cs, guard + size);
	if (!r.m.ok)
		r.where = "guard-after";
	return r;
}

} // namespace mrxe_verify

#endif
