// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * RoCEv2 wire format: opcode table, header build/parse, packet validation
 * and the ICRC.  Pure C shared by the kernel module and the unit tests.
 */
#include "mrxe_wire.h"

#define HLEN(m)	(MRXE_BTH_LEN +						\
		 (((m) & MRXE_HDR_FETH) ? MRXE_FETH_LEN : 0) +		\
		 (((m) & MRXE_HDR_DETH) ? MRXE_DETH_LEN : 0) +		\
		 (((m) & MRXE_HDR_RETH) ? MRXE_RETH_LEN : 0) +		\
		 (((m) & MRXE_HDR_ATMETH) ? MRXE_ATMETH_LEN : 0) +	\
		 (((m) & MRXE_HDR_AETH) ? MRXE_AETH_LEN : 0) +		\
		 (((m) & MRXE_HDR_ATMACK) ? MRXE_ATMACK_LEN : 0) +	\
		 (((m) & MRXE_HDR_IMMDT) ? MRXE_IMMDT_LEN : 0) +	\
		 (((m) & MRXE_HDR_IETH) ? MRXE_IETH_LEN : 0))

#define OP(opc, nm, m) \
	[opc] = { .name = nm, .mask = (m) | MRXE_M_VALID, .hdr_len = HLEN(m) }

#define REQ	MRXE_M_REQ
#define RSP	MRXE_M_RESP
#define PAY	MRXE_HDR_PAYLOAD
#define S_FIRST	(REQ | MRXE_M_SEND | MRXE_M_FIRST | PAY | MRXE_M_RWR)
#define S_MID	(REQ | MRXE_M_SEND | MRXE_M_MIDDLE | PAY)
#define S_LAST	(REQ | MRXE_M_SEND | MRXE_M_LAST | PAY)
#define S_ONLY	(REQ | MRXE_M_SEND | MRXE_M_ONLY | PAY | MRXE_M_RWR)
#define W_FIRST	(REQ | MRXE_M_WRITE | MRXE_M_FIRST | PAY | MRXE_HDR_RETH)
#define W_MID	(REQ | MRXE_M_WRITE | MRXE_M_MIDDLE | PAY)
#define W_LAST	(REQ | MRXE_M_WRITE | MRXE_M_LAST | PAY)
#define W_ONLY	(REQ | MRXE_M_WRITE | MRXE_M_ONLY | PAY | MRXE_HDR_RETH)
#define IMM	(MRXE_HDR_IMMDT | MRXE_M_RWR)
#define RR	(RSP | MRXE_M_READ_RESP | PAY)
#define ATM	(REQ | MRXE_M_ATOMIC | MRXE_M_ONLY | MRXE_HDR_ATMETH)

/*
 * IBA 9.2.1 Table 38 (opcodes) and 9.3 (which extension headers each one
 * carries).  RD (0x40..) is not supported: those entries stay invalid.
 */
const struct mrxe_opinfo mrxe_opcode_table[256] = {
	OP(0x00, "RC_SEND_FIRST", S_FIRST),
	OP(0x01, "RC_SEND_MIDDLE", S_MID),
	OP(0x02, "RC_SEND_LAST", S_LAST),
	OP(0x03, "RC_SEND_LAST_IMM", S_LAST | IMM),
	OP(0x04, "RC_SEND_ONLY", S_ONLY),
	OP(0x05, "RC_SEND_ONLY_IMM", S_ONLY | IMM),
	OP(0x06, "RC_WRITE_FIRST", W_FIRST),
	OP(0x07, "RC_WRITE_MIDDLE", W_MID),
	OP(0x08, "RC_WRITE_LAST", W_LAST),
	OP(0x09, "RC_WRITE_LAST_IMM", W_LAST | IMM),
	OP(0x0a, "RC_WRITE_ONLY", W_ONLY),
	OP(0x0b, "RC_WRITE_ONLY_IMM", W_ONLY | IMM),
	OP(0x0c, "RC_READ_REQ", REQ | MRXE_M_READ | MRXE_M_ONLY | MRXE_HDR_RETH),
	OP(0x0d, "RC_READ_RESP_FIRST", RR | MRXE_M_FIRST | MRXE_HDR_AETH),
	OP(0x0e, "RC_READ_RESP_MIDDLE", RR | MRXE_M_MIDDLE),
	OP(0x0f, "RC_READ_RESP_LAST", RR | MRXE_M_LAST | MRXE_HDR_AETH),
	OP(0x10, "RC_READ_RESP_ONLY", RR | MRXE_M_ONLY | MRXE_HDR_AETH),
	OP(0x11, "RC_ACK", RSP | MRXE_M_ACK | MRXE_M_ONLY | MRXE_HDR_AETH),
	OP(0x12, "RC_ATOMIC_ACK", RSP | MRXE_M_ATOMIC_ACK | MRXE_M_ONLY |
				  MRXE_HDR_AETH | MRXE_HDR_ATMACK),
	OP(0x13, "RC_CMP_SWAP", ATM),
	OP(0x14, "RC_FETCH_ADD", ATM),
	OP(0x16, "RC_SEND_LAST_INV", S_LAST | MRXE_HDR_IETH),
	OP(0x17, "RC_SEND_ONLY_INV", S_ONLY | MRXE_HDR_IETH),
	/*
	 * IBA 1.5 MPE: FLUSH is BTH + FETH + RETH, answered like a
	 * zero-length READ (one RDMA READ Response Only, no payload), so it
	 * is an M_READ too; ATOMIC WRITE is BTH + RETH + 8 payload bytes,
	 * acknowledged like a WRITE.
	 */
	OP(0x1c, "RC_FLUSH", REQ | MRXE_M_READ | MRXE_M_FLUSH | MRXE_M_ONLY |
			     MRXE_HDR_FETH | MRXE_HDR_RETH),
	OP(0x1d, "RC_ATOMIC_WRITE", W_ONLY | MRXE_M_ATOMIC_WRITE),

	OP(0x20, "UC_SEND_FIRST", S_FIRST),
	OP(0x21, "UC_SEND_MIDDLE", S_MID),
	OP(0x22, "UC_SEND_LAST", S_LAST),
	OP(0x23, "UC_SEND_LAST_IMM", S_LAST | IMM),
	OP(0x24, "UC_SEND_ONLY", S_ONLY),
	OP(0x25, "UC_SEND_ONLY_IMM", S_ONLY | IMM),
	OP(0x26, "UC_WRITE_FIRST", W_FIRST),
	OP(0x27, "UC_WRITE_MIDDLE", W_MID),
	OP(0x28, "UC_WRITE_LAST", W_LAST),
	OP(0x29, "UC_WRITE_LAST_IMM", W_LAST | IMM),
	OP(0x2a, "UC_WRITE_ONLY", W_ONLY),
	OP(0x2b, "UC_WRITE_ONLY_IMM", W_ONLY | IMM),

	OP(0x64, "UD_SEND_ONLY", S_ONLY | MRXE_HDR_DETH),
	OP(0x65, "UD_SEND_ONLY_IMM", S_ONLY | IMM | MRXE_HDR_DETH),

	[MRXE_OPC_CNP] = { .name = "CNP",
			   .mask = MRXE_M_CNP | MRXE_M_VALID,
			   .hdr_len = MRXE_BTH_LEN },
};

u32 mrxe_op_hdr_off(u8 opcode, u32 hdr)
{
	static const struct { u32 bit; u8 len; } order[] = {
		{ MRXE_HDR_FETH, MRXE_FETH_LEN },
		{ MRXE_HDR_DETH, MRXE_DETH_LEN },
		{ MRXE_HDR_RETH, MRXE_RETH_LEN },
		{ MRXE_HDR_ATMETH, MRXE_ATMETH_LEN },
		{ MRXE_HDR_AETH, MRXE_AETH_LEN },
		{ MRXE_HDR_ATMACK, MRXE_ATMACK_LEN },
		{ MRXE_HDR_IMMDT, MRXE_IMMDT_LEN },
		{ MRXE_HDR_IETH, MRXE_IETH_LEN },
	};
	u32 mask = mrxe_op_mask(opcode);
	u32 off = MRXE_BTH_LEN;
	size_t i;

	if (!(mask & hdr))
		return 0;
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		if (order[i].bit == hdr)
			return off;
		if (mask & order[i].bit)
			off += order[i].len;
	}
	return 0;
}

void mrxe_bth_build(u8 *p, const struct mrxe_bth *b)
{
	p[0] = b->opcode;
	p[1] = (b->se ? 0x80 : 0) | (b->mig ? 0x40 : 0) |
	       ((b->pad & 3) << 4) | (b->tver & 0xf);
	mrxe_put16(p + 2, b->pkey);
	p[4] = (b->fecn ? 0x80 : 0) | (b->becn ? 0x40 : 0);
	mrxe_put24(p + 5, b->dqpn & MRXE_QPN_MASK);
	p[8] = b->ackreq ? 0x80 : 0;
	mrxe_put24(p + 9, b->psn & MRXE_PSN_MASK);
}

void mrxe_bth_parse(const u8 *p, struct mrxe_bth *b)
{
	b->opcode = p[0];
	b->se = p[1] & 0x80;
	b->mig = p[1] & 0x40;
	b->pad = (p[1] >> 4) & 3;
	b->tver = p[1] & 0xf;
	b->pkey = mrxe_get16(p + 2);
	b->fecn = p[4] & 0x80;
	b->becn = p[4] & 0x40;
	b->dqpn = mrxe_get24(p + 5);
	b->ackreq = p[8] & 0x80;
	b->psn = mrxe_get24(p + 9);
}

void mrxe_deth_build(u8 *p, const struct mrxe_deth *h)
{
	mrxe_put32(p, h->qkey);
	p[4] = 0;
	mrxe_put24(p + 5, h->sqpn & MRXE_QPN_MASK);
}

void mrxe_deth_parse(const u8 *p, struct mrxe_deth *h)
{
	h->qkey = mrxe_get32(p);
	h->sqpn = mrxe_get24(p + 5);
}

void mrxe_reth_build(u8 *p, const struct mrxe_reth *h)
{
	mrxe_put64(p, h->va);
	mrxe_put32(p + 8, h->rkey);
	mrxe_put32(p + 12, h->len);
}

void mrxe_reth_parse(const u8 *p, struct mrxe_reth *h)
{
	h->va = mrxe_get64(p);
	h->rkey = mrxe_get32(p + 8);
	h->len = mrxe_get32(p + 12);
}

void mrxe_atmeth_build(u8 *p, const struct mrxe_atmeth *h)
{
	mrxe_put64(p, h->va);
	mrxe_put32(p + 8, h->rkey);
	mrxe_put64(p + 12, h->swap_add);
	mrxe_put64(p + 20, h->compare);
}

void mrxe_atmeth_parse(const u8 *p, struct mrxe_atmeth *h)
{
	h->va = mrxe_get64(p);
	h->rkey = mrxe_get32(p + 8);
	h->swap_add = mrxe_get64(p + 12);
	h->compare = mrxe_get64(p + 20);
}

void mrxe_aeth_build(u8 *p, const struct mrxe_aeth *h)
{
	p[0] = h->syndrome;
	mrxe_put24(p + 1, h->msn & MRXE_MSN_MASK);
}

void mrxe_aeth_parse(const u8 *p, struct mrxe_aeth *h)
{
	h->syndrome = p[0];
	h->msn = mrxe_get24(p + 1);
}

/* IBA 9.7.5.2.8 Table 45, in microseconds; entry 0 is 655.36 ms. */
static const u32 rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

u32 mrxe_rnr_timer_us(u8 timer)
{
	return rnr_timer_us[timer & 0x1f];
}

/*
 * The part of parsing shared by standard and MetaRoCE packets, once the
 * headers (hdr_len bytes from the BTH) are known: pad and payload length
 * (IBA 9.2, A17.3.3 ICRC at the end), then fill @info.
 */
static int mrxe_pkt_parse_finish(const u8 *bth, u32 len, u32 hdr_len,
				 u32 mask, u8 opcode,
				 struct mrxe_pkt_info *info)
{
	u32 room = len - hdr_len - MRXE_ICRC_LEN;

	info->pad = mrxe_bth_pad(bth);
	if (info->pad > room)
		return MRXE_PARSE_PAD;
	if (!(mask & MRXE_HDR_PAYLOAD) && room)
		return MRXE_PARSE_LEN;
	info->mask = mask;
	info->opcode = opcode;
	info->hdr_len = (u16)hdr_len;
	info->paylen = room - info->pad;
	info->psn = mrxe_bth_psn(bth);
	info->qpn = mrxe_bth_qpn(bth);
	return MRXE_PARSE_OK;
}

int mrxe_pkt_parse(const u8 *bth, u32 len, struct mrxe_pkt_info *info)
{
	u32 hdr_len, mask;
	u8 opcode;

	if (len < MRXE_BTH_LEN + MRXE_ICRC_LEN)
		return MRXE_PARSE_SHORT;
	opcode = mrxe_bth_opcode(bth);
	mask = mrxe_op_mask(opcode);
	if (!(mask & MRXE_M_VALID) || (mask & MRXE_M_CNP))
		return MRXE_PARSE_OPCODE;
	if (mrxe_bth_tver(bth) != 0)
		return MRXE_PARSE_TVER;
	hdr_len = mrxe_op_hdr_len(opcode);
	if (len < hdr_len + MRXE_ICRC_LEN)
		return MRXE_PARSE_SHORT;
	return mrxe_pkt_parse_finish(bth, len, hdr_len, mask, opcode, info);
}

static const u32 crc32_table[256] = {
	0x00000000, 0x77073096, 0xee0e612c, 0x990951ba,
	0x076dc419, 0x706af48f, 0xe963a535, 0x9e6495a3,
	0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988,
	0x09b64c2b, 0x7eb17cbd, 0xe7b82d07, 0x90bf1d91,
	0x1db71064, 0x6ab020f2, 0xf3b97148, 0x84be41de,
	0x1adad47d, 0x6ddde4eb, 0xf4d4b551, 0x83d385c7,
	0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec,
	0x14015c4f, 0x63066cd9, 0xfa0f3d63, 0x8d080df5,
	0x3b6e20c8, 0x4c69105e, 0xd56041e4, 0xa2677172,
	0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b,
	0x35b5a8fa, 0x42b2986c, 0xdbbbc9d6, 0xacbcf940,
	0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59,
	0x26d930ac, 0x51de003a, 0xc8d75180, 0xbfd06116,
	0x21b4f4b5, 0x56b3c423, 0xcfba9599, 0xb8bda50f,
	0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924,
	0x2f6f7c87, 0x58684c11, 0xc1611dab, 0xb6662d3d,
	0x76dc4190, 0x01db7106, 0x98d220bc, 0xefd5102a,
	0x71b18589, 0x06b6b51f, 0x9fbfe4a5, 0xe8b8d433,
	0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818,
	0x7f6a0dbb, 0x086d3d2d, 0x91646c97, 0xe6635c01,
	0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
	0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457,
	0x65b0d9c6, 0x12b7e950, 0x8bbeb8ea, 0xfcb9887c,
	0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65,
	0x4db26158, 0x3ab551ce, 0xa3bc0074, 0xd4bb30e2,
	0x4adfa541, 0x3dd895d7, 0xa4d1c46d, 0xd3d6f4fb,
	0x4369e96a, 0x346ed9fc, 0xad678846, 0xda60b8d0,
	0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9,
	0x5005713c, 0x270241aa, 0xbe0b1010, 0xc90c2086,
	0x5768b525, 0x206f85b3, 0xb966d409, 0xce61e49f,
	0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4,
	0x59b33d17, 0x2eb40d81, 0xb7bd5c3b, 0xc0ba6cad,
	0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a,
	0xead54739, 0x9dd277af, 0x04db2615, 0x73dc1683,
	0xe3630b12, 0x94643b84, 0x0d6d6a3e, 0x7a6a5aa8,
	0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1,
	0xf00f9344, 0x8708a3d2, 0x1e01f268, 0x6906c2fe,
	0xf762575d, 0x806567cb, 0x196c3671, 0x6e6b06e7,
	0xfed41b76, 0x89d32be0, 0x10da7a5a, 0x67dd4acc,
	0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5,
	0xd6d6a3e8, 0xa1d1937e, 0x38d8c2c4, 0x4fdff252,
	0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
	0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60,
	0xdf60efc3, 0xa867df55, 0x316e8eef, 0x4669be79,
	0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236,
	0xcc0c7795, 0xbb0b4703, 0x220216b9, 0x5505262f,
	0xc5ba3bbe, 0xb2bd0b28, 0x2bb45a92, 0x5cb36a04,
	0xc2d7ffa7, 0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d,
	0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a,
	0x9c0906a9, 0xeb0e363f, 0x72076785, 0x05005713,
	0x95bf4a82, 0xe2b87a14, 0x7bb12bae, 0x0cb61b38,
	0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21,
	0x86d3d2d4, 0xf1d4e242, 0x68ddb3f8, 0x1fda836e,
	0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777,
	0x88085ae6, 0xff0f6a70, 0x66063bca, 0x11010b5c,
	0x8f659eff, 0xf862ae69, 0x616bffd3, 0x166ccf45,
	0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2,
	0xa7672661, 0xd06016f7, 0x4969474d, 0x3e6e77db,
	0xaed16a4a, 0xd9d65adc, 0x40df0b66, 0x37d83bf0,
	0xa9bcae53, 0xdebb9ec5, 0x47b2cf7f, 0x30b5ffe9,
	0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6,
	0xbad03605, 0xcdd70693, 0x54de5729, 0x23d967bf,
	0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
	0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

u32 mrxe_crc32_le(u32 crc, const void *buf, size_t len)
{
	const u8 *p = buf;

	while (len--)
		crc = crc32_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#ifdef __KERNEL__
#include <linux/crc32.h>
/* The kernel's slice-by-8 crc32_le() computes the same function, faster. */
#define icrc_crc32(c, b, l)	crc32_le(c, b, l)
#else
#define icrc_crc32(c, b, l)	mrxe_crc32_le(c, b, l)
#endif

u32 mrxe_icrc(const u8 *l3, bool ipv6, const u8 *udp, const u8 *bth, u32 len)
{
	u8 hdr[MRXE_IPV6_HDR_LEN + MRXE_UDP_HDR_LEN + MRXE_BTH_LEN];
	u32 l3_len = ipv6 ? MRXE_IPV6_HDR_LEN : MRXE_IPV4_HDR_LEN;
	u8 *u = hdr + l3_len;
	u8 *b = u + MRXE_UDP_HDR_LEN;
	u32 crc = MRXE_ICRC_SEED;

	memcpy(hdr, l3, l3_len);
	if (ipv6) {
		/* traffic class (8 bits) and flow label (20 bits) */
		hdr[0] |= 0x0f;
		hdr[1] = 0xff;
		hdr[2] = 0xff;
		hdr[3] = 0xff;
		hdr[7] = 0xff;		/* hop limit */
	} else {
		hdr[1] = 0xff;		/* TOS (DSCP + ECN) */
		hdr[8] = 0xff;		/* TTL */
		hdr[10] = 0xff;		/* header checksum */
		hdr[11] = 0xff;
	}
	memcpy(u, udp, MRXE_UDP_HDR_LEN);
	u[6] = 0xff;			/* UDP checksum */
	u[7] = 0xff;
	memcpy(b, bth, MRXE_BTH_LEN);
	b[4] = 0xff;			/* BTH resv8a (incl. F/B) */

	crc = icrc_crc32(crc, hdr, l3_len + MRXE_UDP_HDR_LEN + MRXE_BTH_LEN);
	if (len > MRXE_BTH_LEN)
		crc = icrc_crc32(crc, bth + MRXE_BTH_LEN, len - MRXE_BTH_LEN);
	return ~crc;
}

/* ---- MetaRoCE: MRH, header stack, SACKETH (wire-format.rst) ---- */

u8 mrxe_mrh_class_of(u8 opcode)
{
	u32 m = mrxe_op_mask(opcode);

	if (!(m & MRXE_M_VALID) || (m & (MRXE_HDR_DETH | MRXE_M_CNP)))
		return 0;
	if (m & MRXE_M_SEND)
		return MRXE_MRH_SEND;
	if (m & MRXE_M_WRITE)
		return MRXE_MRH_WRITE;
	if (m & MRXE_M_READ)
		return MRXE_MRH_READ_REQ;
	if (m & MRXE_M_READ_RESP)
		return MRXE_MRH_READ_RESP;
	if (m & MRXE_M_ATOMIC)
		return MRXE_MRH_ATOMIC;
	if (m & (MRXE_M_ACK | MRXE_M_ATOMIC_ACK))
		return MRXE_MRH_ACK;
	return 0;
}

void mrxe_mrh_build(u8 *p, const struct mrxe_mrh *h)
{
	p[0] = (u8)((h->version & 0xf) << 4) | (h->cls & 0xf);
	p[1] = h->flags & 0xf0;
	p[2] = h->path;
	p[3] = h->path_gen;
	/* byte 4: RSN on SEND/WRITE, reserved (0) on the other classes */
	p[4] = (h->cls == MRXE_MRH_SEND || h->cls == MRXE_MRH_WRITE) ?
	       h->rsn : 0;
	mrxe_put24(p + 5, h->msn & MRXE_MSN_MASK);
	mrxe_put32(p + 8, h->offset);
	mrxe_put32(p + 12, h->tsval);
	mrxe_put32(p + 16, h->tsecr);
}

int mrxe_mrh_parse(const u8 *p, struct mrxe_mrh *h)
{
	h->version = p[0] >> 4;
	h->cls = p[0] & 0xf;
	h->flags = p[1];
	h->path = p[2];
	h->path_gen = p[3];
	h->rsn = p[4];
	h->msn = mrxe_get24(p + 5);
	h->offset = mrxe_get32(p + 8);
	h->tsval = mrxe_get32(p + 12);
	h->tsecr = mrxe_get32(p + 16);
	if (h->version != MRXE_MRH_VERSION || (p[1] & 0x0f) ||
	    h->cls < MRXE_MRH_SEND || h->cls > MRXE_MRH_ACK)
		return MRXE_PARSE_MRH;
	if (p[4] && h->cls != MRXE_MRH_SEND && h->cls != MRXE_MRH_WRITE)
		return MRXE_PARSE_MRH;
	return 0;
}

/* WRITE MIDDLE/LAST gain a RETH in MetaRoCE mode. */
static bool meta_adds_reth(u32 mask)
{
	return (mask & MRXE_M_WRITE) && !(mask & MRXE_HDR_RETH);
}

u32 mrxe_meta_hdr_len(u8 opcode)
{
	u32 mask = mrxe_op_mask(opcode);

	if (!mrxe_mrh_class_of(opcode))
		return 0;
	return mrxe_op_hdr_len(opcode) + MRXE_MRH_LEN +
	       (meta_adds_reth(mask) ? MRXE_RETH_LEN : 0);
}

u32 mrxe_meta_hdr_off(u8 opcode, u32 hdr)
{
	u32 mask = mrxe_op_mask(opcode);
	u32 off;

	if (!mrxe_mrh_class_of(opcode))
		return 0;
	if (meta_adds_reth(mask)) {
		/* RETH is the first extension header of a WRITE. */
		if (hdr == MRXE_HDR_RETH)
			return MRXE_BTH_LEN + MRXE_MRH_LEN;
		off = mrxe_op_hdr_off(opcode, hdr);
		return off ? off + MRXE_MRH_LEN + MRXE_RETH_LEN : 0;
	}
	off = mrxe_op_hdr_off(opcode, hdr);
	return off ? off + MRXE_MRH_LEN : 0;
}

void mrxe_sacketh_build(u8 *p, const struct mrxe_sack_info *s)
{
	u8 n = min_t(u8, s->nblocks, MRXE_SACK_MAX_BLOCKS);
	u8 i;

	/* byte 0: DUP(7) | CE count(6..3, saturating) | blocks(2..0) */
	p[0] = (s->trigger_dup ? 0x80 : 0) | (min_t(u8, s->ce, 15) << 3) | n;
	mrxe_put24(p + 1, s->trigger_psn & MRXE_PSN_MASK);
	p += MRXE_SACKETH_HDR_LEN;
	for (i = 0; i < n; i++, p += MRXE_SACKETH_BLK_LEN) {
		p[0] = 0;
		mrxe_put24(p + 1, s->blk[i].base & MRXE_PSN_MASK);
		mrxe_put64(p + 4, s->blk[i].bitmap);
	}
}

int mrxe_sacketh_parse(const u8 *p, u32 len, u32 epsn, struct mrxe_sack_info *s)
{
	u8 n, i;
	s32 d;

	if (len < MRXE_SACKETH_HDR_LEN)
		return MRXE_PARSE_SHORT;
	n = p[0] & 0x07;
	if (n > MRXE_SACK_MAX_BLOCKS)
		return MRXE_PARSE_MRH;
	if (len < mrxe_sacketh_len(n))
		return MRXE_PARSE_SHORT;
	s->epsn = epsn & MRXE_PSN_MASK;
	s->trigger_dup = p[0] & 0x80;
	s->ce = (p[0] >> 3) & 0x0f;
	s->trigger_psn = mrxe_get24(p + 1);
	s->nblocks = n;
	p += MRXE_SACKETH_HDR_LEN;
	for (i = 0; i < n; i++, p += MRXE_SACKETH_BLK_LEN) {
		if (p[0])
			return MRXE_PARSE_MRH;
		s->blk[i].base = mrxe_get24(p + 1);
		s->blk[i].bitmap = mrxe_get64(p + 4);
		d = mrxe_psn_diff(s->blk[i].base, s->epsn);
		if (d <= 0 || d >= MRXE_SACK_WINDOW)
			return MRXE_PARSE_MRH;
	}
	return (int)mrxe_sacketh_len(n);
}

int mrxe_meta_pkt_parse(const u8 *bth, u32 len, struct mrxe_pkt_info *info,
			struct mrxe_mrh *mrh)
{
	struct mrxe_sack_info si;
	u32 hdr_len, mask;
	u8 opcode;
	int ret;

	if (len < MRXE_BTH_LEN + MRXE_MRH_LEN + MRXE_ICRC_LEN)
		return MRXE_PARSE_SHORT;
	opcode = mrxe_bth_opcode(bth);
	mask = mrxe_op_mask(opcode);
	if (!mrxe_mrh_class_of(opcode))
		return MRXE_PARSE_OPCODE;
	if (mrxe_bth_tver(bth) != MRXE_META_TVER)
		return MRXE_PARSE_TVER;
	if (mrxe_mrh_parse(bth + MRXE_BTH_LEN, mrh) ||
	    mrh->cls != mrxe_mrh_class_of(opcode))
		return MRXE_PARSE_MRH;
	hdr_len = mrxe_meta_hdr_len(opcode);
	if (len < hdr_len + MRXE_ICRC_LEN)
		return MRXE_PARSE_SHORT;
	if (opcode == MRXE_OPC(MRXE_TR_RC, MRXE_OP_ACK)) {
		ret = mrxe_sacketh_parse(bth + hdr_len,
					 len - hdr_len - MRXE_ICRC_LEN,
					 mrxe_psn_add(mrxe_bth_psn(bth), 1), &si);
		if (ret < 0)
			return ret;
		hdr_len += ret;
	}
	return mrxe_pkt_parse_finish(bth, len, hdr_len, mask, opcode, info);
}
