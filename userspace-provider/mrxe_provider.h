/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * mrxe rdma-core provider: internal C++ types.
 *
 * Every verbs object is a C++ class deriving from the libibverbs C struct it
 * is handed out as (verbs_qp, verbs_cq, ...), so a pointer libibverbs gives
 * back converts with static_cast.  Objects are created with new(nothrow),
 * own their ring mappings (RAII) and are deleted by their destroy verb.
 * Nothing here throws: the library is built with -fno-exceptions and every
 * entry point from libibverbs returns errno values.
 */
#ifndef MRXE_PROVIDER_H
#define MRXE_PROVIDER_H

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>

#include <pthread.h>
#include <sys/mman.h>

/* verbs_private_NN.h for the IBVERBS_PRIVATE_NN found at build time (Makefile) */
#ifdef MRXE_PABI_HEADER
#include MRXE_PABI_HEADER
#else
#include "verbs_private_34.h"
#endif
#include "mrxedv.h"

extern "C" {
#include <rdma/mrxe-abi.h>
#include "mrxe_ring.h"
}
/* mrxe_shim.h's C helpers would clobber std::min/std::max. */
#undef min
#undef max

#define MRXE_EXPORT __attribute__((visibility("default")))

#define mrxe_log(ctx, level, fmt, ...)                                         \
	do {                                                                   \
		int saved_errno_ = errno;                                      \
		__verbs_log((ctx), (level), "mrxe: %s: " fmt, __func__,        \
			    ##__VA_ARGS__);                                    \
		errno = saved_errno_;                                          \
	} while (0)
#define mrxe_err(ctx, fmt, ...) mrxe_log(ctx, 1 /* VERBS_LOG_ERR */, fmt, ##__VA_ARGS__)
#define mrxe_dbg(ctx, fmt, ...) mrxe_log(ctx, 4 /* VERBS_LOG_DEBUG */, fmt, ##__VA_ARGS__)

namespace mrxe {

static_assert(sizeof(mrxe_ring_hdr) == MRXE_RING_HDR_SIZE);
static_assert(offsetof(mrxe_ring_hdr, producer_index) == 64);
static_assert(offsetof(mrxe_ring_hdr, consumer_index) == 128);
static_assert(sizeof(mrxe_send_wqe) == MRXE_SEND_WQE_HDR_SIZE);
static_assert(sizeof(mrxe_recv_wqe) == MRXE_RECV_WQE_HDR_SIZE);
static_assert(sizeof(mrxe_cqe) == MRXE_CQE_SIZE);
static_assert(sizeof(mrxe_sge) == sizeof(ibv_sge));
static_assert(offsetof(mrxe_sge, lkey) == offsetof(ibv_sge, lkey));

/* A response buffer: the core uverbs response followed by mrxe's udata. */
template <class Core, class Drv> class RespBuf {
	static_assert(sizeof(Core) % alignof(Drv) == 0,
		      "driver udata must follow the core response aligned");

public:
	RespBuf() { std::memset(raw_, 0, sizeof(raw_)); }
	Core *core() { return reinterpret_cast<Core *>(raw_); }
	static constexpr size_t size() { return sizeof(Core) + sizeof(Drv); }
	Drv drv() const
	{
		Drv d;
		std::memcpy(&d, raw_ + sizeof(Core), sizeof(d));
		return d;
	}

private:
	alignas(8) unsigned char raw_[sizeof(Core) + sizeof(Drv)];
};

/* pthread spinlock usable with std::lock_guard. */
class SpinLock {
public:
	SpinLock() { pthread_spin_init(&l_, PTHREAD_PROCESS_PRIVATE); }
	~SpinLock() { pthread_spin_destroy(&l_); }
	SpinLock(const SpinLock &) = delete;
	SpinLock &operator=(const SpinLock &) = delete;
	void lock() { pthread_spin_lock(&l_); }
	void unlock() { pthread_spin_unlock(&l_); }

private:
	pthread_spinlock_t l_;
};

/* An mmap() of the device file; unmapped on destruction. */
class Mapping {
public:
	Mapping() = default;
	~Mapping() { reset(); }
	Mapping(const Mapping &) = delete;
	Mapping &operator=(const Mapping &) = delete;
	Mapping(Mapping &&o) noexcept : addr_(o.addr_), len_(o.len_)
	{
		o.addr_ = nullptr;
		o.len_ = 0;
	}
	Mapping &operator=(Mapping &&o) noexcept
	{
		if (this != &o) {
			reset();
			std::swap(addr_, o.addr_);
			std::swap(len_, o.len_);
		}
		return *this;
	}
	int map(int fd, uint64_t offset, size_t len);
	void reset();
	void *addr() const { return addr_; }
	size_t size() const { return len_; }

private:
	void *addr_ = nullptr;
	size_t len_ = 0;
};

/*
 * One shared ring (struct mrxe_ring_hdr + slots).  We own exactly one of the
 * two indices: the producer index of send/recv/srq rings, the consumer index
 * of completion rings.  own_ is our private copy of it; the other index is
 * read from shared memory with acquire semantics and sanity-checked.
 */
class Ring {
public:
	enum class Role { Producer, Consumer };

	/* Map and validate; expected_slots 0 = take the header's value. */
	int map(int fd, const mrxe_mmap_info &mi, Role role,
		uint32_t expected_slots, uint32_t min_elem);
	bool mapped() const { return hdr_ != nullptr; }
	uint32_t slots() const { return mask_ + 1; }
	uint32_t mask() const { return mask_; }
	uint32_t elem_size() const { return 1u << log2_; }
	uint32_t own() const { return own_; }
	/* SQ ring: the QP's current transport mode (kernel-written). */
	uint32_t transport_mode() const
	{
		return hdr_ ? __atomic_load_n(&hdr_->transport_mode,
					      __ATOMIC_ACQUIRE) : 0;
	}
	void *slot(uint32_t index) const
	{
		return base_ + (size_t(mrxe_ring_slot(index, mask_)) << log2_);
	}
	/* The index the peer owns, acquire-loaded. */
	uint32_t peer() const
	{
		uint32_t *p = role_ == Role::Producer ? &hdr_->consumer_index
						      : &hdr_->producer_index;
		return std::atomic_ref<uint32_t>(*p).load(std::memory_order_acquire);
	}
	/* Publish our index after filling/consuming slots (release). */
	void publish(uint32_t v)
	{
		uint32_t *p = role_ == Role::Producer ? &hdr_->producer_index
						      : &hdr_->consumer_index;
		own_ = v;
		std::atomic_ref<uint32_t>(*p).store(v, std::memory_order_release);
	}
	void swap(Ring &o) noexcept
	{
		std::swap(map_, o.map_);
		std::swap(hdr_, o.hdr_);
		std::swap(base_, o.base_);
		std::swap(mask_, o.mask_);
		std::swap(log2_, o.log2_);
		std::swap(own_, o.own_);
		std::swap(role_, o.role_);
	}
	void reset()
	{
		Ring empty;
		swap(empty);
	}

private:
	Mapping map_;
	mrxe_ring_hdr *hdr_ = nullptr;
	uint8_t *base_ = nullptr;
	uint32_t mask_ = 0;
	uint32_t log2_ = 0;
	uint32_t own_ = 0;
	Role role_ = Role::Producer;
};

struct Device {
	verbs_device vdev;
	uint32_t abi_ver;
};

/* Allocated zeroed by libibverbs (_verbs_init_and_alloc_context): POD only. */
struct Context {
	verbs_context vctx;
	mrxe_alloc_context_resp uresp;	/* what alloc_ucontext told us */
	/* Device limits, read once at open to validate requests locally. */
	uint32_t max_qp_wr, max_sge, max_cqe, max_srq_wr, max_srq_sge;
	uint32_t max_inline;
};

/*
 * A protection domain, or a parent domain (ibv_alloc_parent_domain) that
 * wraps one.  A parent domain shares its protection domain's kernel handle
 * (objects created on it belong to that PD) and has no kernel object of its
 * own.  mrxe's queues live in kernel memory mapped into the process, so a
 * parent domain's allocators are accepted and kept but never called: there
 * is no provider-allocated queue buffer to place.
 */
struct Pd {
	ibv_pd pd;			/* handed out; must stay first */
	Pd *protection = nullptr;	/* parent domain: the PD it wraps */
	/*
	 * Protection domain: parent domains on it.  Parent domain: CQs, QPs
	 * and SRQs created on it.  Either way dealloc is EBUSY while > 0.
	 */
	std::atomic<uint32_t> users{0};
	void *pd_context = nullptr;
	void *(*alloc)(ibv_pd *, void *, size_t, size_t, uint64_t) = nullptr;
	void (*free)(ibv_pd *, void *, void *, uint64_t) = nullptr;

	bool is_parent() const { return protection != nullptr; }
};
static_assert(std::is_standard_layout_v<Pd> && offsetof(Pd, pd) == 0);

inline Pd *to_pd(ibv_pd *p) { return reinterpret_cast<Pd *>(p); }

/* Parent domains count the queues created on them (released by pd_put). */
inline Pd *pd_get_parent(ibv_pd *p)
{
	Pd *pd = to_pd(p);

	if (!p || !pd->is_parent())
		return nullptr;
	pd->users.fetch_add(1, std::memory_order_relaxed);
	return pd;
}
inline void pd_put(Pd *pd)
{
	if (pd)
		pd->users.fetch_sub(1, std::memory_order_release);
}

struct Cq : verbs_cq {
	Ring ring;
	SpinLock lock;		/* serialises pollers and resize on ring */
	mrxe_cqe cur{};		/* extended poll: the entry being read */
	uint32_t cqn = 0;
	bool broken = false;	/* resize remap failed: CQ unusable */
	Pd *parent = nullptr;	/* parent domain it was created on */
};

struct Srq : verbs_srq {
	Ring ring;
	SpinLock lock;		/* serialises posters on ring */
	uint32_t max_sge = 0;
	uint32_t srq_num_ = 0;
	Pd *parent = nullptr;	/* parent domain it was created on */
};

struct Qp : verbs_qp {
	Ring sq, rq;
	SpinLock sq_lock;	/* posters on sq, and the ibv_wr_* batch */
	SpinLock rq_lock;	/* posters on rq */
	uint32_t sq_max_sge = 0, sq_max_inline = 0, rq_max_sge = 0;
	uint32_t transport_mode = 0, num_paths = 0, flags = 0;
	/* ibv_wr_* batch state, valid between wr_start and wr_complete */
	uint32_t wr_next = 0;		/* next free producer index */
	mrxe_send_wqe *wr_cur = nullptr;	/* WQE being built */
	int wr_err = 0;
	Pd *parent = nullptr;	/* parent domain it was created on */
};

struct Ah {
	ibv_ah ah;
	uint32_t ah_num = 0;
};

inline Context *to_ctx(ibv_context *c)
{
	return reinterpret_cast<Context *>(verbs_get_ctx(c));
}
inline Cq *to_cq(ibv_cq *c) { return static_cast<Cq *>(reinterpret_cast<verbs_cq *>(c)); }
inline Cq *to_cq(ibv_cq_ex *c) { return static_cast<Cq *>(reinterpret_cast<verbs_cq *>(c)); }
inline Qp *to_qp(ibv_qp *q) { return static_cast<Qp *>(reinterpret_cast<verbs_qp *>(q)); }
inline Qp *to_qp(ibv_qp_ex *q) { return static_cast<Qp *>(reinterpret_cast<verbs_qp *>(q)); }
inline Srq *to_srq(ibv_srq *s) { return static_cast<Srq *>(reinterpret_cast<verbs_srq *>(s)); }
inline Ah *to_ah(ibv_ah *a) { return reinterpret_cast<Ah *>(a); }

bool is_mrxe_context(ibv_context *c);

/* mrxe_cq.cc */
ibv_cq *create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *ch, int vec);
ibv_cq_ex *create_cq_ex(ibv_context *ctx, ibv_cq_init_attr_ex *attr);
int poll_cq(ibv_cq *cq, int ne, ibv_wc *wc);
int resize_cq(ibv_cq *cq, int cqe);
int destroy_cq(ibv_cq *cq);

/* mrxe_qp.cc */
ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr);
ibv_qp *create_qp_ex(ibv_context *ctx, ibv_qp_init_attr_ex *attr);
int query_qp(ibv_qp *qp, ibv_qp_attr *attr, int mask, ibv_qp_init_attr *init);
int modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int mask);
int destroy_qp(ibv_qp *qp);
int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad);
int post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad);
int bind_mw(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *bind);
ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr);
ibv_srq *create_srq_ex(ibv_context *ctx, ibv_srq_init_attr_ex *attr);
int modify_srq(ibv_srq *srq, ibv_srq_attr *attr, int mask);
int query_srq(ibv_srq *srq, ibv_srq_attr *attr);
int destroy_srq(ibv_srq *srq);
int post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad);
int get_srq_num(ibv_srq *srq, uint32_t *num);

} /* namespace mrxe */

#endif /* MRXE_PROVIDER_H */
