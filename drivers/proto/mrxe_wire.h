/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * RoCEv2 wire format: IBA transport headers (IBA vol 1, 9.2-9.5), the opcode
 * table (IBA 9.2.1 Table 38/39), PSN arithmetic (IBA 9.7.1) and the ICRC
 * (IBA Annex A17.3.3).  Pure C: builds in the kernel and in userspace (unit
 * tests) and includes only mrxe_shim.h.
 *
 * All header accessors take a byte pointer and do explicit big-endian byte
 * loads/stores, so they never depend on the alignment of the packet buffer.
 */
#ifndef MRXE_WIRE_H
#define MRXE_WIRE_H

#include "mrxe_shim.h"

/* ---- sizes (bytes) ---- */
#define MRXE_BTH_LEN		12
#define MRXE_DETH_LEN		8
#define MRXE_RETH_LEN		16
#define MRXE_ATMETH_LEN		28
#define MRXE_FETH_LEN		4	/* IBA 1.5 MPE: FLUSH extended hdr */
#define MRXE_AETH_LEN		4
#define MRXE_ATMACK_LEN		8
#define MRXE_IMMDT_LEN		4
#define MRXE_IETH_LEN		4
#define MRXE_ICRC_LEN		4
#define MRXE_UDP_HDR_LEN	8
#define MRXE_IPV4_HDR_LEN	20
#define MRXE_IPV6_HDR_LEN	40
#define MRXE_GRH_LEN		40	/* IBA 8.3: GRH in front of UD receives */
#define MRXE_CNP_PAYLOAD_LEN	16	/* A17.9.2: reserved bytes after BTH */
#define MRXE_MAX_HDR_LEN	(MRXE_BTH_LEN + MRXE_ATMETH_LEN)

#define MRXE_PSN_MASK		0xffffff
#define MRXE_QPN_MASK		0xffffff
#define MRXE_MSN_MASK		0xffffff
#define MRXE_DEFAULT_PKEY	0xffff
#define MRXE_QP1_QKEY		0x80010000	/* IBA 10.2.5: GSI Q_Key */

/* BTH opcode: transport in bits 7..5 (IBA 9.2.1, Table 38). */
#define MRXE_TR_RC		0x00
#define MRXE_TR_UC		0x20
#define MRXE_TR_RD		0x40
#define MRXE_TR_UD		0x60
#define MRXE_TR_CNP		0x80
#define MRXE_TR_MASK		0xe0

enum mrxe_op {
	MRXE_OP_SEND_FIRST		= 0x00,
	MRXE_OP_SEND_MIDDLE		= 0x01,
	MRXE_OP_SEND_LAST		= 0x02,
	MRXE_OP_SEND_LAST_IMM		= 0x03,
	MRXE_OP_SEND_ONLY		= 0x04,
	MRXE_OP_SEND_ONLY_IMM		= 0x05,
	MRXE_OP_WRITE_FIRST		= 0x06,
	MRXE_OP_WRITE_MIDDLE		= 0x07,
	MRXE_OP_WRITE_LAST		= 0x08,
	MRXE_OP_WRITE_LAST_IMM		= 0x09,
	MRXE_OP_WRITE_ONLY		= 0x0a,
	MRXE_OP_WRITE_ONLY_IMM		= 0x0b,
	MRXE_OP_READ_REQ		= 0x0c,
	MRXE_OP_READ_RESP_FIRST		= 0x0d,
	MRXE_OP_READ_RESP_MIDDLE	= 0x0e,
	MRXE_OP_READ_RESP_LAST		= 0x0f,
	MRXE_OP_READ_RESP_ONLY		= 0x10,
	MRXE_OP_ACK			= 0x11,
	MRXE_OP_ATOMIC_ACK		= 0x12,
	MRXE_OP_CMP_SWAP		= 0x13,
	MRXE_OP_FETCH_ADD		= 0x14,
	MRXE_OP_SEND_LAST_INV		= 0x16,
	MRXE_OP_SEND_ONLY_INV		= 0x17,
	/* IBA 1.5 Memory Placement Extensions (RC only) */
	MRXE_OP_FLUSH			= 0x1c,
	MRXE_OP_ATOMIC_WRITE		= 0x1d,
};

/* Full opcodes used by name in the code. */
#define MRXE_OPC(tr, op)	((u8)((tr) | (op)))
#define MRXE_OPC_CNP		0x81	/* RoCEv2 CNP, A17.9.2 */

/* What an opcode is and which headers follow its BTH (opcode table mask). */
enum mrxe_op_mask {
	MRXE_HDR_DETH		= BIT(0),
	MRXE_HDR_RETH		= BIT(1),
	MRXE_HDR_ATMETH		= BIT(2),
	MRXE_HDR_AETH		= BIT(3),
	MRXE_HDR_ATMACK		= BIT(4),
	MRXE_HDR_IMMDT		= BIT(5),
	MRXE_HDR_IETH		= BIT(6),
	MRXE_HDR_PAYLOAD	= BIT(7),	/* may carry payload */

	MRXE_M_REQ		= BIT(8),	/* requester -> responder */
	MRXE_M_RESP		= BIT(9),	/* responder -> requester */
	MRXE_M_SEND		= BIT(10),
	MRXE_M_WRITE		= BIT(11),
	MRXE_M_READ		= BIT(12),	/* read request */
	MRXE_M_ATOMIC		= BIT(13),	/* atomic request */
	MRXE_M_READ_RESP	= BIT(14),
	MRXE_M_ACK		= BIT(15),	/* ACK/NAK */
	MRXE_M_ATOMIC_ACK	= BIT(16),
	MRXE_M_FIRST		= BIT(17),	/* starts a message */
	MRXE_M_MIDDLE		= BIT(18),
	MRXE_M_LAST		= BIT(19),	/* ends a message */
	MRXE_M_RWR		= BIT(20),	/* consumes a receive WQE */
	MRXE_M_CNP		= BIT(21),
	MRXE_M_VALID		= BIT(22),
	MRXE_HDR_FETH		= BIT(23),	/* FLUSH: BTH, FETH, RETH */
	MRXE_M_FLUSH		= BIT(24),	/* RDMA FLUSH (also M_READ) */
	MRXE_M_ATOMIC_WRITE	= BIT(25),	/* RDMA ATOMIC WRITE (+M_WRITE) */
};

#define MRXE_M_ONLY	(MRXE_M_FIRST | MRXE_M_LAST)

struct mrxe_opinfo {
	const char	*name;
	u32		mask;		/* enum mrxe_op_mask */
	u8		hdr_len;	/* BTH + extension headers */
};

extern const struct mrxe_opinfo mrxe_opcode_table[256];

static inline u32 mrxe_op_mask(u8 opcode)
{
	return mrxe_opcode_table[opcode].mask;
}

static inline u32 mrxe_op_hdr_len(u8 opcode)
{
	return mrxe_opcode_table[opcode].hdr_len;
}

/*
 * Offset of extension header @hdr (one MRXE_HDR_* bit) from the start of
 * the BTH, in IBA order: BTH, FETH (IBA 1.5), DETH, RETH, AtomicETH, AETH, AtomicAckETH,
 * ImmDt, IETH (IBA 9.2, Figure 34).  Returns 0 when the opcode lacks it.
 */
u32 mrxe_op_hdr_off(u8 opcode, u32 hdr);

/* ---- byte order helpers (unaligned-safe) ---- */
static inline u16 mrxe_get16(const u8 *p)
{
	return (u16)((p[0] << 8) | p[1]);
}

static inline u32 mrxe_get24(const u8 *p)
{
	return ((u32)p[0] << 16) | ((u32)p[1] << 8) | p[2];
}

static inline u32 mrxe_get32(const u8 *p)
{
	return ((u32)p[0] << 24) | ((u32)p[1] << 16) | ((u32)p[2] << 8) | p[3];
}

static inline u64 mrxe_get64(const u8 *p)
{
	return ((u64)mrxe_get32(p) << 32) | mrxe_get32(p + 4);
}

static inline void mrxe_put16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void mrxe_put24(u8 *p, u32 v)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

static inline void mrxe_put32(u8 *p, u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline void mrxe_put64(u8 *p, u64 v)
{
	mrxe_put32(p, (u32)(v >> 32));
	mrxe_put32(p + 4, (u32)v);
}

/* ---- PSN arithmetic: 24-bit serial numbers (IBA 9.7.1) ---- */
static inline u32 mrxe_psn_add(u32 psn, u32 n)
{
	return (psn + n) & MRXE_PSN_MASK;
}

/* Signed distance a - b in the 24-bit PSN space, in [-2^23, 2^23). */
static inline s32 mrxe_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static inline bool mrxe_psn_before(u32 a, u32 b)
{
	return mrxe_psn_diff(a, b) < 0;
}

static inline bool mrxe_psn_after(u32 a, u32 b)
{
	return mrxe_psn_diff(a, b) > 0;
}

/* a <= x <= b in PSN order (window no larger than 2^23) */
static inline bool mrxe_psn_in(u32 x, u32 a, u32 b)
{
	return mrxe_psn_diff(x, a) >= 0 && mrxe_psn_diff(b, x) >= 0;
}

/* ---- header structs (host order) and build/parse ---- */
struct mrxe_bth {
	u8	opcode;
	bool	se;		/* solicited event */
	bool	mig;		/* MigReq */
	u8	pad;		/* PadCnt 0..3 */
	u8	tver;		/* transport header version, 0 */
	u16	pkey;
	bool	fecn, becn;	/* RoCEv2: reserved on the wire (A17.3.3) */
	u32	dqpn;
	bool	ackreq;
	u32	psn;
};

void mrxe_bth_build(u8 *p, const struct mrxe_bth *b);
void mrxe_bth_parse(const u8 *p, struct mrxe_bth *b);

/* Fast accessors on a BTH in a packet. */
static inline u8 mrxe_bth_opcode(const u8 *bth)
{
	return bth[0];
}

static inline u8 mrxe_bth_pad(const u8 *bth)
{
	return (bth[1] >> 4) & 3;
}

static inline u8 mrxe_bth_tver(const u8 *bth)
{
	return bth[1] & 0xf;
}

static inline bool mrxe_bth_se(const u8 *bth)
{
	return bth[1] & 0x80;
}

static inline u16 mrxe_bth_pkey(const u8 *bth)
{
	return mrxe_get16(bth + 2);
}

static inline u32 mrxe_bth_qpn(const u8 *bth)
{
	return mrxe_get24(bth + 5);
}

static inline bool mrxe_bth_ackreq(const u8 *bth)
{
	return bth[8] & 0x80;
}

static inline u32 mrxe_bth_psn(const u8 *bth)
{
	return mrxe_get24(bth + 9);
}

struct mrxe_deth {
	u32	qkey;
	u32	sqpn;
};

struct mrxe_reth {
	u64	va;
	u32	rkey;
	u32	len;
};

struct mrxe_atmeth {
	u64	va;
	u32	rkey;
	u64	swap_add;
	u64	compare;
};

/* AETH syndrome (IBA 9.7.5.1.1, Table 43) */
#define MRXE_AETH_TYPE_MASK	0x60
#define MRXE_AETH_ACK		0x00
#define MRXE_AETH_RNR_NAK	0x20
#define MRXE_AETH_NAK		0x60
#define MRXE_AETH_VAL_MASK	0x1f
#define MRXE_AETH_CREDIT_INVALID 0x1f	/* "no credit info": unlimited */
#define MRXE_NAK_PSN_SEQ	0
#define MRXE_NAK_INVALID_REQ	1
#define MRXE_NAK_REM_ACCESS	2
#define MRXE_NAK_REM_OP		3
#define MRXE_NAK_INVALID_RD	4

struct mrxe_aeth {
	u8	syndrome;
	u32	msn;
};

void mrxe_deth_build(u8 *p, const struct mrxe_deth *h);
void mrxe_deth_parse(const u8 *p, struct mrxe_deth *h);
void mrxe_reth_build(u8 *p, const struct mrxe_reth *h);
void mrxe_reth_parse(const u8 *p, struct mrxe_reth *h);
void mrxe_atmeth_build(u8 *p, const struct mrxe_atmeth *h);
void mrxe_atmeth_parse(const u8 *p, struct mrxe_atmeth *h);
void mrxe_aeth_build(u8 *p, const struct mrxe_aeth *h);
void mrxe_aeth_parse(const u8 *p, struct mrxe_aeth *h);
/* AtomicAckETH, ImmDt and IETH are a single 64/32-bit big-endian field. */
/*
 * FETH (IBA 1.5 MPE, FLUSH Extended Transport Header), one 32-bit word:
 * placement type in bits 3..0 (bit 0 global visibility, bit 1 persistence;
 * the IB_FLUSH_GLOBAL/PERSISTENT values) and selectivity level in bits 5..4
 * (0 the RETH's range, 1 the whole memory region); the rest is reserved.
 */
#define MRXE_FETH_PLT_MASK	0x0f
#define MRXE_FETH_PLT_GLOBAL	0x01
#define MRXE_FETH_PLT_PERSIST	0x02
#define MRXE_FETH_SEL_SHIFT	4
#define MRXE_FETH_SEL_MASK	0x30
#define MRXE_FETH_SEL_RANGE	0
#define MRXE_FETH_SEL_MR	1

static inline void mrxe_feth_build(u8 *p, u8 plt, u8 sel)
{
	mrxe_put32(p, (plt & MRXE_FETH_PLT_MASK) |
		   ((sel << MRXE_FETH_SEL_SHIFT) & MRXE_FETH_SEL_MASK));
}

static inline void mrxe_feth_parse(const u8 *p, u8 *plt, u8 *sel)
{
	u32 v = mrxe_get32(p);

	*plt = v & MRXE_FETH_PLT_MASK;
	*sel = (v & MRXE_FETH_SEL_MASK) >> MRXE_FETH_SEL_SHIFT;
}

static inline void mrxe_atmack_build(u8 *p, u64 orig)
{
	mrxe_put64(p, orig);
}

static inline u64 mrxe_atmack_parse(const u8 *p)
{
	return mrxe_get64(p);
}

/* ImmDt travels as opaque big-endian bytes: keep it in wire order. */
static inline void mrxe_immdt_build(u8 *p, __be32 imm)
{
	memcpy(p, &imm, 4);
}

static inline __be32 mrxe_immdt_parse(const u8 *p)
{
	__be32 imm;

	memcpy(&imm, p, 4);
	return imm;
}

static inline void mrxe_ieth_build(u8 *p, u32 rkey)
{
	mrxe_put32(p, rkey);
}

static inline u32 mrxe_ieth_parse(const u8 *p)
{
	return mrxe_get32(p);
}

/* RNR NAK timer field -> microseconds (IBA 9.7.5.2.8, Table 45). */
u32 mrxe_rnr_timer_us(u8 timer);

/* Local ACK timeout field -> nanoseconds: 4.096 us * 2^t; 0 = infinite. */
static inline u64 mrxe_ack_timeout_ns(u8 timeout)
{
	if (!timeout)
		return 0;
	if (timeout > 31)
		timeout = 31;
	return 4096ULL << timeout;
}

/* Pad count for a payload of len bytes: payload + pad is 4-aligned. */
static inline u8 mrxe_pad_for(u32 len)
{
	return (u8)((4 - (len & 3)) & 3);
}

/*
 * Packet validation shared by the receive path and the fuzzer/unit tests.
 * @bth points at the BTH, @len is the number of bytes from the BTH to the
 * end of the ICRC.  Fills @info and returns 0, or a negative MRXE_PARSE_*.
 */
enum mrxe_parse_err {
	MRXE_PARSE_OK		= 0,
	MRXE_PARSE_SHORT	= -1,	/* shorter than its headers + ICRC */
	MRXE_PARSE_OPCODE	= -2,	/* unknown/unsupported opcode */
	MRXE_PARSE_TVER		= -3,	/* transport version != 0 */
	MRXE_PARSE_PAD		= -4,	/* pad larger than payload */
	MRXE_PARSE_LEN		= -5,	/* payload on an op without one */
	MRXE_PARSE_MRH		= -6,	/* bad MetaRoCE header/SACKETH */
};

struct mrxe_pkt_info {
	u32	mask;		/* mrxe_op_mask of the opcode */
	u32	psn;
	u32	qpn;
	u32	paylen;		/* payload bytes, pad excluded */
	u16	hdr_len;	/* BTH + extension headers */
	u8	opcode;
	u8	pad;
};

int mrxe_pkt_parse(const u8 *bth, u32 len, struct mrxe_pkt_info *info);

/* ---- CRC-32 and ICRC (IBA A17.3.3) ---- */
/*
 * Reflected CRC-32 (IEEE 802.3 polynomial 0xEDB88320) without pre/post
 * inversion, i.e. the kernel's crc32_le(): zlib's crc32(b) equals
 * ~mrxe_crc32_le(~0, b).
 */
u32 mrxe_crc32_le(u32 crc, const void *buf, size_t len);

/* CRC of 8 bytes of 0xff (the masked LRH) seeded with ~0 (A17.3.3). */
#define MRXE_ICRC_SEED		0xdebb20e3

/*
 * ICRC of a RoCEv2 packet.  @l3 is the IPv4 (no options) or IPv6 header,
 * @udp the UDP header, @bth the BTH, @len the bytes from the BTH to the
 * start of the ICRC field (headers + payload + pad).  The variant fields
 * are masked in a private copy: IPv4 TOS, TTL, checksum; IPv6 traffic
 * class, flow label, hop limit; UDP checksum; BTH byte 4 (resv8a incl.
 * F/B).  Returns the value the wire carries as its 4 ICRC bytes in
 * little-endian order (how every RoCEv2 implementation stores it).
 */
u32 mrxe_icrc(const u8 *l3, bool ipv6, const u8 *udp, const u8 *bth, u32 len);

/* Store/load the ICRC field. */
static inline void mrxe_icrc_put(u8 *p, u32 icrc)
{
	p[0] = icrc;
	p[1] = icrc >> 8;
	p[2] = icrc >> 16;
	p[3] = icrc >> 24;
}

static inline u32 mrxe_icrc_get(const u8 *p)
{
	return (u32)p[0] | ((u32)p[1] << 8) | ((u32)p[2] << 16) |
	       ((u32)p[3] << 24);
}

/* ---- MetaRoCE (Documentation/wire-format.rst, "MetaRoCE mode") ---- */
/*
 * Everything below is additive: a standard-mode packet never carries any of
 * it.  A MetaRoCE packet is a RoCEv2 packet with BTH TVer = 1 and a 20-byte
 * MetaRoCE header (MRH) right after the BTH, before the IBA extension
 * headers.  MetaRoCE ACKs (opcode ACK, TVer = 1) carry MRH, AETH and a
 * SACK extension header (SACKETH).
 */
#define MRXE_META_TVER		1
#define MRXE_MRH_LEN		20
#define MRXE_MRH_VERSION	0

/*
 * `auto` negotiation: BTH byte 8 bit 6 (the top bit of the IBA "resv7"
 * field).  An auto requester sets it on standard-mode requests; an mrxe
 * responder that speaks MetaRoCE echoes it on its ACKs and READ/atomic
 * responses.  Stock rxe never reads resv7 and sends it as 0; it is covered
 * by the ICRC, so the network cannot set it.
 */
#define MRXE_BTH_META_CAP	0x40

static inline bool mrxe_bth_meta_cap(const u8 *bth)
{
	return bth[8] & MRXE_BTH_META_CAP;
}

static inline void mrxe_bth_set_meta_cap(u8 *bth, bool on)
{
	if (on)
		bth[8] |= MRXE_BTH_META_CAP;
	else
		bth[8] &= (u8)~MRXE_BTH_META_CAP;
}

/* MRH byte 0 bits 3..0: what the packet is (checked against the opcode). */
enum mrxe_mrh_class {
	MRXE_MRH_SEND		= 1,
	MRXE_MRH_WRITE		= 2,
	MRXE_MRH_READ_REQ	= 3,
	MRXE_MRH_READ_RESP	= 4,
	MRXE_MRH_ATOMIC		= 5,
	MRXE_MRH_ACK		= 6,	/* ACK/NAK and atomic ACK */
};

/* MRH byte 1 */
#define MRXE_MRH_F_ECE		0x80	/* ECN echo: CE seen since last report */
#define MRXE_MRH_F_RETX		0x40	/* a retransmission */
#define MRXE_MRH_F_SYNC		0x20	/* first MetaRoCE packet after `auto` upgrade */
#define MRXE_MRH_F_TSECR	0x10	/* tsecr is valid */

/* MRH byte 4 of a SEND/WRITE packet: the RSN's low 8 bits. */
#define MRXE_MRH_RSN_OFF	4

static inline void mrxe_mrh_set_rsn(u8 *mrh, u32 rsn)
{
	mrh[MRXE_MRH_RSN_OFF] = (u8)rsn;
}

struct mrxe_mrh {
	u8	version;	/* MRXE_MRH_VERSION */
	u8	cls;		/* enum mrxe_mrh_class */
	u8	flags;		/* MRXE_MRH_F_* */
	u8	path;		/* path index, < MRXE_MAX_PATHS */
	u8	path_gen;	/* bumped when the path's UDP source port changes */
	u8	rsn;		/* SEND/WRITE: receive sequence number, low 8 bits */
	u32	msn;		/* 24 bits: message sequence number */
	u32	offset;		/* payload byte offset within the message */
	u32	tsval;		/* sender clock, mrxe_mrh_ts() */
	u32	tsecr;		/* tsval of the packet this one answers */
};

/*
 * MRH timestamps count 1.024 us ticks (ns >> 10, no division) and wrap
 * after about 73 minutes; only differences and echoes are used.
 */
#define MRXE_MRH_TS_SHIFT	10

static inline u32 mrxe_mrh_ts(u64 ns)
{
	return (u32)(ns >> MRXE_MRH_TS_SHIFT);
}

/*
 * An echoed tsecr back in the sender's ns clock, given the sender's @now_ns
 * (the tick it was sent in, rounded down; 0 if older than the clock).
 */
static inline u64 mrxe_mrh_ts_ns(u32 ts, u64 now_ns)
{
	u64 age = (u32)(mrxe_mrh_ts(now_ns) - ts);
	u64 tick = now_ns >> MRXE_MRH_TS_SHIFT;

	return age > tick ? 0 : (tick - age) << MRXE_MRH_TS_SHIFT;
}

void mrxe_mrh_build(u8 *p, const struct mrxe_mrh *h);

/* Rewrite path and path_gen of a built MRH at @p (the sender's choice). */
static inline void mrxe_mrh_set_path(u8 *p, u8 path, u8 gen)
{
	p[2] = path;
	p[3] = gen;
}
/* Returns 0 or MRXE_PARSE_MRH (unknown version/class, reserved bits set). */
int mrxe_mrh_parse(const u8 *p, struct mrxe_mrh *h);
/* The MRH class an opcode must carry, 0 if it cannot be MetaRoCE. */
u8 mrxe_mrh_class_of(u8 opcode);

/*
 * MetaRoCE header stack: BTH, MRH, then the IBA extension headers of the
 * opcode, where every WRITE packet (not only FIRST/ONLY) carries RETH so
 * it can be placed at RETH.va + MRH.offset without the first packet.
 * Both return 0 for an opcode that has no MetaRoCE form (UD, CNP).  For
 * MRXE_OP_ACK the SACKETH that follows the AETH is not included.
 */
u32 mrxe_meta_hdr_len(u8 opcode);
u32 mrxe_meta_hdr_off(u8 opcode, u32 hdr);

/*
 * SACK state shared by the reorder window (receiver), the scoreboard
 * (sender) and the SACKETH codec.  MRXE_SACK_WINDOW is the most PSNs a
 * sender may have outstanding and what a receiver tracks above its ePSN
 * (equal to MRXE_PKT_RING in drivers/mrxe_pipe.h).  The window has
 * MRXE_SACK_WIN_BLOCKS 64-PSN blocks; one ACK carries at most
 * MRXE_SACK_MAX_BLOCKS of them (the SACKETH's 3-bit count, 0..4 on the
 * wire), so the others are reported over successive ACKs.
 */
#define MRXE_SACK_WINDOW	4096
#define MRXE_SACK_BLOCK_BITS	64
#define MRXE_SACK_WIN_BLOCKS	(MRXE_SACK_WINDOW / MRXE_SACK_BLOCK_BITS)
#define MRXE_SACK_MAX_BLOCKS	4
#define MRXE_SACKETH_HDR_LEN	4
#define MRXE_SACKETH_BLK_LEN	12

struct mrxe_sack_blk {
	u32	base;		/* PSN of bit 0 */
	u64	bitmap;		/* bit i set: base + i received */
};

struct mrxe_sack_info {
	u32	epsn;		/* every PSN before it received (BTH.PSN + 1) */
	u32	trigger_psn;	/* PSN of the packet that caused this ACK */
	bool	trigger_dup;	/* ... and it was a duplicate */
	u8	ce;		/* CE-marked packets since the last ACK, 0..15 */
	u8	nblocks;
	struct mrxe_sack_blk blk[MRXE_SACK_MAX_BLOCKS];
};

static inline u32 mrxe_sacketh_len(u8 nblocks)
{
	return MRXE_SACKETH_HDR_LEN + (u32)nblocks * MRXE_SACKETH_BLK_LEN;
}

/* Writes mrxe_sacketh_len(s->nblocks) bytes; epsn travels in the BTH. */
void mrxe_sacketh_build(u8 *p, const struct mrxe_sack_info *s);
/*
 * Parses at most @len bytes; @epsn is BTH.PSN + 1 of the ACK.  Returns the
 * SACKETH length or MRXE_PARSE_SHORT / MRXE_PARSE_MRH (more than
 * MRXE_SACK_MAX_BLOCKS blocks, a block not above epsn or beyond the window).
 */
int mrxe_sacketh_parse(const u8 *p, u32 len, u32 epsn, struct mrxe_sack_info *s);

/*
 * Validation of a MetaRoCE packet (TVer = 1): like mrxe_pkt_parse() but
 * with the MetaRoCE header stack; fills @mrh too.  For an ACK, hdr_len
 * includes the SACKETH.
 */
int mrxe_meta_pkt_parse(const u8 *bth, u32 len, struct mrxe_pkt_info *info,
			struct mrxe_mrh *mrh);

#endif /* MRXE_WIRE_H */
