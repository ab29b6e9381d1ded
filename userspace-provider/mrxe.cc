// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe rdma-core provider: device matching, context, PD, MR, MW, AH,
 * multicast, and the shared-ring mapping helpers.
 */
#include "mrxe_provider.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <rdma/ib_user_ioctl_verbs.h>

namespace mrxe {

static_assert(int(MRXEDV_TRANSPORT_DEFAULT) == int(MRXE_TRANSPORT_DEFAULT));
static_assert(int(MRXEDV_TRANSPORT_STANDARD) == int(MRXE_TRANSPORT_STANDARD));
static_assert(int(MRXEDV_TRANSPORT_METAROCE) == int(MRXE_TRANSPORT_METAROCE));
static_assert(int(MRXEDV_TRANSPORT_AUTO) == int(MRXE_TRANSPORT_AUTO));
static_assert(MRXEDV_MAX_PATHS == MRXE_MAX_PATHS);
static_assert(MRXEDV_MAX_PRIORITY == MRXE_MAX_QP_PRIORITY);
static_assert(int(MRXEDV_QP_FLAG_SPRAY) == int(MRXE_QP_FLAG_SPRAY));
static_assert(int(MRXEDV_CAP_METAROCE) == int(MRXE_CAP_METAROCE));
static_assert(int(MRXEDV_CAP_MULTIPATH) == int(MRXE_CAP_MULTIPATH));

/* ---- rings ---- */

int Mapping::map(int fd, uint64_t offset, size_t len)
{
	reset();
	void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       static_cast<off_t>(offset));
	if (p == MAP_FAILED)
		return errno ? errno : ENOMEM;
	addr_ = p;
	len_ = len;
	return 0;
}

void Mapping::reset()
{
	if (addr_)
		munmap(addr_, len_);
	addr_ = nullptr;
	len_ = 0;
}

int Ring::map(int fd, const mrxe_mmap_info &mi, Role role,
	      uint32_t expected_slots, uint32_t min_elem)
{
	if (mi.size < MRXE_RING_HDR_SIZE)
		return EINVAL;
	Mapping m;
	int ret = m.map(fd, mi.offset, mi.size);
	if (ret)
		return ret;

	auto *hdr = static_cast<mrxe_ring_hdr *>(m.addr());
	uint32_t log2 = hdr->log2_elem_size;
	uint32_t mask = hdr->index_mask;
	uint64_t nslots = uint64_t(mask) + 1;

	/* The kernel wrote the header; still never trust it blindly. */
	if (log2 > 16 || (1u << log2) < min_elem || (nslots & mask) != 0 ||
	    (expected_slots && nslots != expected_slots) ||
	    MRXE_RING_HDR_SIZE + (nslots << log2) > mi.size)
		return EPROTO;

	map_ = std::move(m);
	hdr_ = hdr;
	base_ = reinterpret_cast<uint8_t *>(hdr) + MRXE_RING_HDR_SIZE;
	mask_ = mask;
	log2_ = log2;
	role_ = role;
	uint32_t *mine = role == Role::Producer ? &hdr->producer_index
						: &hdr->consumer_index;
	own_ = std::atomic_ref<uint32_t>(*mine).load(std::memory_order_relaxed);
	return 0;
}

/* ---- device ---- */

/*
 * No name or modalias entry: an mrxe device may have any name (roce0, x,
 * mrxe0), and a stock rxe device named mrxe1 must not be claimed.  The table
 * is empty and match_device() decides for every device.
 */
static const verbs_match_ent match_table[] = {
	{},
};

/*
 * A device is mrxe's when the module published the mrxe_abi_version
 * attribute on the ib_device (/sys/class/infiniband/DEV/mrxe_abi_version)
 * and it carries our ABI; a device that reports a driver id belongs to that
 * driver's provider (stock rxe reports RDMA_DRIVER_RXE).
 */
static bool match_device(verbs_sysfs_dev *sd)
{
	if (sd->driver_id != RDMA_DRIVER_UNKNOWN)
		return false;
	char buf[16];
	if (ibv_read_ibdev_sysfs_file(buf, sizeof(buf), sd,
				      "mrxe_abi_version") <= 0)
		return false;
	return std::strtoul(buf, nullptr, 10) == MRXE_ABI_VERSION;
}

static verbs_device *alloc_device(verbs_sysfs_dev *sd)
{
	auto *dev = static_cast<Device *>(std::calloc(1, sizeof(Device)));
	if (!dev)
		return nullptr;
	dev->abi_ver = sd->abi_ver;
	return &dev->vdev;
}

static void uninit_device(verbs_device *vdev)
{
	std::free(reinterpret_cast<Device *>(vdev));
}

/* ---- context ---- */

static int query_device_ex(ibv_context *ctx, const ibv_query_device_ex_input *in,
			   ibv_device_attr_ex *attr, size_t attr_size)
{
	ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);

	int ret = ibv_cmd_query_device_any(ctx, in, attr, attr_size, &resp,
					   &resp_size);
	if (ret)
		return ret;
	uint64_t fw = resp.base.fw_ver;
	std::snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		      "%u.%u.%u", unsigned(fw >> 32) & 0xffff,
		      unsigned(fw >> 16) & 0xffff, unsigned(fw) & 0xffff);
	return 0;
}

static int query_port(ibv_context *ctx, uint8_t port, ibv_port_attr *attr)
{
	struct ibv_query_port cmd{};

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

/* ---- PD ---- */

static ibv_pd *alloc_pd(ibv_context *ctx)
{
	auto *pd = new (std::nothrow) Pd{};
	struct ibv_alloc_pd cmd{};
	ib_uverbs_alloc_pd_resp resp{};

	if (!pd) {
		errno = ENOMEM;
		return nullptr;
	}
	int ret = ibv_cmd_alloc_pd(ctx, &pd->pd, &cmd, sizeof(cmd), &resp,
				   sizeof(resp));
	if (ret) {
		delete pd;
		errno = ret;
		return nullptr;
	}
	return &pd->pd;
}

/*
 * EBUSY while MRs, MWs, QPs, SRQs or AHs still use it (uverbs usecnt), or
 * while parent domains wrap it; a parent domain is EBUSY while CQs, QPs or
 * SRQs created on it exist.
 */
static int dealloc_pd(ibv_pd *ibpd)
{
	Pd *pd = to_pd(ibpd);

	if (pd->users.load(std::memory_order_acquire))
		return EBUSY;
	if (pd->is_parent()) {
		pd_put(pd->protection);
		delete pd;
		return 0;
	}
	int ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;
	delete pd;
	return 0;
}

/*
 * Parent domain: a PD plus an optional thread domain and allocators.  mrxe
 * offers no thread domains (ibv_alloc_td is EOPNOTSUPP), so td must be NULL.
 */
static ibv_pd *alloc_parent_domain(ibv_context *ctx,
				   ibv_parent_domain_init_attr *attr)
{
	constexpr uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
				   IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;

	if (!attr || (attr->comp_mask & ~known) || attr->td || !attr->pd ||
	    attr->pd->context != ctx || to_pd(attr->pd)->is_parent()) {
		errno = EINVAL;
		return nullptr;
	}
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free)) {
		errno = EINVAL;
		return nullptr;
	}
	auto *pd = new (std::nothrow) Pd{};
	if (!pd) {
		errno = ENOMEM;
		return nullptr;
	}
	pd->protection = to_pd(attr->pd);
	pd->protection->users.fetch_add(1, std::memory_order_relaxed);
	/* what rdma-core's ibv_initialize_parent_domain() does */
	pd->pd.context = ctx;
	pd->pd.handle = attr->pd->handle;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	return &pd->pd;
}

/* ---- MR ---- */

/* IBA 10.6.3.1 / C10-? : remote write or atomic needs local write. */
static constexpr int kMrAccessKnown =
	IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
	IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_OPTIONAL_RANGE
#if MRXE_HAVE_WR_FLUSH
	/* RDMA FLUSH targets; the kernel refuses FLUSH_PERSISTENT (no pmem) */
	| IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT
#endif
	;

static bool mr_access_ok(int access)
{
	if (access & ~kMrAccessKnown)
		return false;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return false;
	return true;
}

static ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
		      int access)
{
	if (!mr_access_ok(access)) {
		errno = EINVAL;
		return nullptr;
	}
	auto *vmr = new (std::nothrow) verbs_mr{};
	struct ibv_reg_mr cmd{};
	ib_uverbs_reg_mr_resp resp{};

	if (!vmr) {
		errno = ENOMEM;
		return nullptr;
	}
	int ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
				 sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		delete vmr;
		errno = ret;
		return nullptr;
	}
	return &vmr->ibv_mr;
}

static int dereg_mr(verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;
	delete vmr;
	return 0;
}

/* ---- MW ---- */

static ibv_mw *alloc_mw(ibv_pd *pd, ibv_mw_type type)
{
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return nullptr;
	}
	auto *mw = new (std::nothrow) ibv_mw{};
	struct ibv_alloc_mw cmd{};
	ib_uverbs_alloc_mw_resp resp{};

	if (!mw) {
		errno = ENOMEM;
		return nullptr;
	}
	int ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
				   sizeof(resp));
	if (ret) {
		delete mw;
		errno = ret;
		return nullptr;
	}
	return mw;
}

static int dealloc_mw(ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;
	delete mw;
	return 0;
}

/* ---- AH ---- */

static ibv_ah *create_ah(ibv_pd *pd, ibv_ah_attr *attr)
{
	auto *ah = new (std::nothrow) Ah{};
	RespBuf<ib_uverbs_create_ah_resp, mrxe_create_ah_resp> resp;

	if (!ah) {
		errno = ENOMEM;
		return nullptr;
	}
	int ret = ibv_cmd_create_ah(pd, &ah->ah, attr, resp.core(), resp.size());
	if (ret) {
		delete ah;
		errno = ret;
		return nullptr;
	}
	ah->ah_num = resp.drv().ah_num;
	return &ah->ah;
}

static int destroy_ah(ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;
	delete to_ah(ibah);
	return 0;
}

/* ---- multicast: the kernel checks the QP type (UD) and the GID ---- */

static int attach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid)
{
	return ibv_cmd_attach_mcast(qp, gid, lid);
}

static int detach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid)
{
	return ibv_cmd_detach_mcast(qp, gid, lid);
}

static int req_notify_cq(ibv_cq *cq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(cq, solicited_only);
}

static void free_context(ibv_context *ibctx)
{
	Context *ctx = to_ctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	std::free(ctx);
}

static const verbs_context_ops ctx_ops = [] {
	verbs_context_ops o{};
	o.alloc_mw = alloc_mw;
	o.alloc_parent_domain = alloc_parent_domain;
	o.alloc_pd = alloc_pd;
	o.attach_mcast = attach_mcast;
	o.bind_mw = bind_mw;
	o.create_ah = create_ah;
	o.create_cq = create_cq;
	o.create_cq_ex = create_cq_ex;
	o.create_qp = create_qp;
	o.create_qp_ex = create_qp_ex;
	o.create_srq = create_srq;
	o.create_srq_ex = create_srq_ex;
	o.dealloc_mw = dealloc_mw;
	o.dealloc_pd = dealloc_pd;
	o.dereg_mr = dereg_mr;
	o.destroy_ah = destroy_ah;
	o.destroy_cq = destroy_cq;
	o.destroy_qp = destroy_qp;
	o.destroy_srq = destroy_srq;
	o.detach_mcast = detach_mcast;
	o.free_context = free_context;
	o.get_srq_num = get_srq_num;
	o.modify_qp = modify_qp;
	o.modify_srq = modify_srq;
	o.poll_cq = poll_cq;
	o.post_recv = post_recv;
	o.post_send = post_send;
	o.post_srq_recv = post_srq_recv;
	o.query_device_ex = query_device_ex;
	o.query_port = query_port;
	o.query_qp = query_qp;
	o.query_srq = query_srq;
	o.reg_mr = reg_mr;
	o.req_notify_cq = req_notify_cq;
	o.resize_cq = resize_cq;
	return o;
}();

static verbs_context *alloc_context(ibv_device *ibdev, int cmd_fd, void *)
{
	auto *ctx = static_cast<Context *>(_verbs_init_and_alloc_context(
		ibdev, cmd_fd, sizeof(Context),
		reinterpret_cast<verbs_context *>(uintptr_t(offsetof(Context, vctx))),
		RDMA_DRIVER_UNKNOWN));
	if (!ctx)
		return nullptr;

	struct ibv_get_context cmd{};
	RespBuf<ib_uverbs_get_context_resp, mrxe_alloc_context_resp> resp;
	int ret = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), resp.core(),
				      resp.size());
	if (ret)
		goto err;
	ctx->uresp = resp.drv();
	if (ctx->uresp.abi_version != MRXE_ABI_VERSION) {
		mrxe_err(&ctx->vctx,
			 "kernel mrxe ABI %u, provider speaks %u\n",
			 ctx->uresp.abi_version, MRXE_ABI_VERSION);
		ret = EPROTO;
		goto err;
	}
	verbs_set_ops(&ctx->vctx, &ctx_ops);

	{
		ibv_device_attr_ex da{};
		ret = query_device_ex(&ctx->vctx.context, nullptr, &da, sizeof(da));
		if (ret)
			goto err;
		ctx->max_qp_wr = uint32_t(da.orig_attr.max_qp_wr);
		ctx->max_sge = uint32_t(da.orig_attr.max_sge);
		ctx->max_cqe = uint32_t(da.orig_attr.max_cqe);
		ctx->max_srq_wr = uint32_t(da.orig_attr.max_srq_wr);
		ctx->max_srq_sge = uint32_t(da.orig_attr.max_srq_sge);
		ctx->max_inline = ctx->uresp.max_inline;
	}
	return &ctx->vctx;

err:
	verbs_uninit_context(&ctx->vctx);
	std::free(ctx);
	errno = ret;
	return nullptr;
}

const verbs_device_ops dev_ops = {
	.name = "mrxe",
	.match_min_abi_version = MRXE_ABI_VERSION,
	.match_max_abi_version = MRXE_ABI_VERSION,
	.match_table = match_table,
	.static_providers = nullptr,
	.match_device = match_device,
	.alloc_context = alloc_context,
	.import_context = nullptr,
	.alloc_device = alloc_device,
	.uninit_device = uninit_device,
};

bool is_mrxe_context(ibv_context *c)
{
	return c && c->device && verbs_get_ctx(c) &&
	       reinterpret_cast<verbs_device *>(c->device)->ops == &dev_ops;
}

/* The only code that runs at load time: hand our ops to libibverbs. */
__attribute__((constructor)) static void register_driver()
{
	verbs_register_driver_34(&dev_ops);
}

} /* namespace mrxe */

/* ---- direct verbs ---- */

extern "C" MRXE_EXPORT bool mrxedv_is_supported(ibv_device *device)
{
	return device &&
	       reinterpret_cast<verbs_device *>(device)->ops == &mrxe::dev_ops;
}

extern "C" MRXE_EXPORT int mrxedv_query_context(ibv_context *ibctx,
						mrxedv_context_attr *attr)
{
	if (!attr)
		return EINVAL;
	if (!mrxe::is_mrxe_context(ibctx))
		return EOPNOTSUPP;
	const mrxe::Context *ctx = mrxe::to_ctx(ibctx);
	*attr = {};
	attr->abi_version = ctx->uresp.abi_version;
	attr->caps = ctx->uresp.caps;
	attr->default_transport = ctx->uresp.default_transport;
	attr->max_inline = ctx->uresp.max_inline;
	attr->max_sge = ctx->uresp.max_sge;
	return 0;
}
