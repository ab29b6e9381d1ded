// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "nl.h"

#include <cerrno>
#include <cstring>
#include <ctime>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>

namespace mrxectl
{

static void walk(const void *p, int len,
		 const std::function<void(const nlattr *)> &fn)
{
	auto *a = static_cast<const nlattr *>(p);
	while (len > 0 && mnl_attr_ok(a, len)) {
		fn(a);
		int step = MNL_ALIGN(a->nla_len);
		len -= step;
		a = reinterpret_cast<const nlattr *>(
			reinterpret_cast<const char *>(a) + step);
	}
}

void for_each_attr(const nlmsghdr *nlh, size_t hdrlen,
		   const std::function<void(const nlattr *)> &fn)
{
	const char *start =
		static_cast<const char *>(mnl_nlmsg_get_payload(nlh)) +
		MNL_ALIGN(hdrlen);
	const char *end = reinterpret_cast<const char *>(nlh) + nlh->nlmsg_len;
	walk(start, static_cast<int>(end - start), fn);
}

void for_each_nested(const nlattr *nest,
		     const std::function<void(const nlattr *)> &fn)
{
	walk(mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest), fn);
}

Attrs parse_attrs(const nlmsghdr *nlh, size_t hdrlen, int maxtype)
{
	Attrs tb(maxtype + 1, nullptr);
	for_each_attr(nlh, hdrlen, [&](const nlattr *a) {
		int t = mnl_attr_get_type(a);
		if (t <= maxtype)
			tb[t] = a;
	});
	return tb;
}

Attrs parse_nested(const nlattr *nest, int maxtype)
{
	Attrs tb(maxtype + 1, nullptr);
	for_each_nested(nest, [&](const nlattr *a) {
		int t = mnl_attr_get_type(a);
		if (t <= maxtype)
			tb[t] = a;
	});
	return tb;
}

Request::Request(uint16_t family, uint8_t cmd, uint8_t version, uint16_t flags)
    : buf_(MNL_SOCKET_BUFFER_SIZE)
{
	nlh_ = mnl_nlmsg_put_header(buf_.data());
	nlh_->nlmsg_type = family;
	nlh_->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	auto *g = static_cast<genlmsghdr *>(
		mnl_nlmsg_put_extra_header(nlh_, sizeof(genlmsghdr)));
	g->cmd = cmd;
	g->version = version;
}

void Request::put_str(uint16_t type, const std::string &s)
{
	mnl_attr_put_strz(nlh_, type, s.c_str());
}

void Request::put_u32(uint16_t type, uint32_t v)
{
	mnl_attr_put_u32(nlh_, type, v);
}

void Request::put_u8(uint16_t type, uint8_t v)
{
	mnl_attr_put_u8(nlh_, type, v);
}

int Request::attr_at(uint32_t off) const
{
	int type = -1;
	for_each_attr(nlh_, sizeof(genlmsghdr), [&](const nlattr *a) {
		uint32_t pos = reinterpret_cast<const char *>(a) -
			       reinterpret_cast<const char *>(nlh_);
		if (off >= pos && off < pos + a->nla_len)
			type = mnl_attr_get_type(a);
	});
	return type;
}

GenlSocket::GenlSocket()
{
	nl_ = mnl_socket_open(NETLINK_GENERIC);
	if (!nl_)
		throw NlError(errno, "cannot open a generic netlink socket",
			      -1);
	int one = 1;
	/* Ask for extack messages; do not echo our request back. */
	mnl_socket_setsockopt(nl_, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl_, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(nl_, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;
		mnl_socket_close(nl_);
		throw NlError(e, "cannot bind the netlink socket", -1);
	}
	portid_ = mnl_socket_get_portid(nl_);
	seq_ = static_cast<uint32_t>(time(nullptr));
}

GenlSocket::~GenlSocket()
{
	if (nl_)
		mnl_socket_close(nl_);
}

/*
 * NLMSG_ERROR / NLMSG_DONE: the error code and, with NLM_F_ACK_TLVS, the
 * extack attributes (message, offset of the bad attribute).
 */
static void check_ack(const nlmsghdr *nlh, const Request &req)
{
	int err = 0;
	const char *payload =
		static_cast<const char *>(mnl_nlmsg_get_payload(nlh));
	size_t tlv_off;

	if (nlh->nlmsg_type == NLMSG_ERROR) {
		if (mnl_nlmsg_get_payload_len(nlh) < sizeof(nlmsgerr))
			throw NlError(EBADMSG, "truncated netlink error", -1);
		auto *e = reinterpret_cast<const nlmsgerr *>(payload);
		err = -e->error;
		tlv_off = sizeof(nlmsgerr);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			tlv_off += e->msg.nlmsg_len - sizeof(nlmsghdr);
	} else {
		if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int))
			err = -*reinterpret_cast<const int *>(payload);
		tlv_off = sizeof(int);
	}
	if (err == 0)
		return;

	std::string msg;
	int attr = -1;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		for_each_attr(nlh, tlv_off, [&](const nlattr *a) {
			switch (mnl_attr_get_type(a)) {
			case NLMSGERR_ATTR_MSG:
				msg = mnl_attr_get_str(a);
				break;
			case NLMSGERR_ATTR_OFFS:
				attr = req.attr_at(mnl_attr_get_u32(a));
				break;
			}
		});
	}
	throw NlError(err, msg, attr);
}

void GenlSocket::run(Request &req, const MsgFn &fn)
{
	nlmsghdr *nlh = req.nlh();
	nlh->nlmsg_seq = ++seq_;
	if (mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0)
		throw NlError(errno, "netlink send failed", -1);

	std::vector<char> buf(MRXECTL_RECV_SIZE);
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl_, buf.data(), buf.size());
		if (n < 0)
			throw NlError(errno, "netlink receive failed", -1);
		auto *m = reinterpret_cast<const nlmsghdr *>(buf.data());
		int len = static_cast<int>(n);
		for (; mnl_nlmsg_ok(m, len); m = mnl_nlmsg_next(m, &len)) {
			if (m->nlmsg_seq != nlh->nlmsg_seq ||
			    m->nlmsg_pid != portid_)
				continue;
			if (m->nlmsg_type == NLMSG_ERROR ||
			    m->nlmsg_type == NLMSG_DONE) {
				check_ack(m, req);
				return; /* ACK or end of dump */
			}
			if (m->nlmsg_type < NLMSG_MIN_TYPE)
				continue; /* NOOP, OVERRUN */
			fn(m);
		}
	}
}

void GenlSocket::resolve(const std::string &name)
{
	Request req(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	req.put_str(CTRL_ATTR_FAMILY_NAME, name);
	try {
		run(req, [&](const nlmsghdr *m) {
			Attrs tb = parse_attrs(m, sizeof(genlmsghdr),
					       CTRL_ATTR_MAX);
			if (tb[CTRL_ATTR_FAMILY_ID])
				family_ = mnl_attr_get_u16(
					tb[CTRL_ATTR_FAMILY_ID]);
			if (!tb[CTRL_ATTR_MCAST_GROUPS])
				return;
			for_each_nested(tb[CTRL_ATTR_MCAST_GROUPS], [&](const nlattr
										*g) {
				Attrs gt = parse_nested(
					g, CTRL_ATTR_MCAST_GRP_MAX);
				if (gt[CTRL_ATTR_MCAST_GRP_NAME] &&
				    gt[CTRL_ATTR_MCAST_GRP_ID])
					groups_[mnl_attr_get_str(
						gt[CTRL_ATTR_MCAST_GRP_NAME])] =
						mnl_attr_get_u32(
							gt[CTRL_ATTR_MCAST_GRP_ID]);
			});
		});
	} catch (const NlError &e) {
		if (e.err == ENOENT)
			throw NlError(
				ENOENT,
				"generic netlink family \"" + name +
					"\" not found: is rdma_mrxe loaded?",
				NlError::LOCAL);
		throw;
	}
	if (!family_)
		throw NlError(ENOENT, "no id for family \"" + name + "\"",
			      NlError::LOCAL);
}

uint32_t GenlSocket::group(const std::string &name) const
{
	auto it = groups_.find(name);
	if (it == groups_.end())
		throw NlError(ENOENT,
			      "multicast group \"" + name + "\" not found", -1);
	return it->second;
}

void GenlSocket::join(uint32_t group)
{
	if (mnl_socket_setsockopt(nl_, NETLINK_ADD_MEMBERSHIP, &group,
				  sizeof(group)) < 0)
		throw NlError(errno, "cannot join the multicast group", -1);
}

void GenlSocket::listen(const std::function<bool(const nlmsghdr *)> &fn)
{
	std::vector<char> buf(MRXECTL_RECV_SIZE);
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl_, buf.data(), buf.size());
		if (n < 0) {
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			throw NlError(errno, "netlink receive failed", -1);
		}
		auto *m = reinterpret_cast<const nlmsghdr *>(buf.data());
		int len = static_cast<int>(n);
		for (; mnl_nlmsg_ok(m, len); m = mnl_nlmsg_next(m, &len)) {
			if (m->nlmsg_type < NLMSG_MIN_TYPE ||
			    m->nlmsg_type != family_)
				continue;
			if (!fn(m))
				return;
		}
	}
}

} // namespace mrxectl
