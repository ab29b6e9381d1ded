// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Generic netlink for mrxectl over libmnl (as iproute2): an RAII socket,
 * family and multicast group resolution through nlctrl, requests, dumps
 * and extended-ACK error reports.
 */
#ifndef MRXECTL_NL_H
#define MRXECTL_NL_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <libmnl/libmnl.h>

#define MRXECTL_RECV_SIZE 32768

namespace mrxectl
{

/* A kernel error: errno, the extack message and the offending attribute. */
struct NlError : std::runtime_error {
	NlError(int err, std::string msg, int attr)
	    : std::runtime_error(msg), err(err), kmsg(std::move(msg)),
	      attr(attr)
	{
	}
	static constexpr int LOCAL = -2; /* attr: the message is ours */
	int err;			 /* positive errno */
	std::string kmsg;		 /* extack message, may be empty */
	int attr; /* attribute type the kernel pointed at, or -1 */
};

/* Walk the attributes after @hdrlen bytes of payload, or inside @nest. */
void for_each_attr(const nlmsghdr *nlh, size_t hdrlen,
		   const std::function<void(const nlattr *)> &fn);
void for_each_nested(const nlattr *nest,
		     const std::function<void(const nlattr *)> &fn);

/* Attributes of one message, by type (top level or one nest). */
using Attrs = std::vector<const nlattr *>;
Attrs parse_attrs(const nlmsghdr *nlh, size_t hdrlen, int maxtype);
Attrs parse_nested(const nlattr *nest, int maxtype);

class Request
{
public:
	Request(uint16_t family, uint8_t cmd, uint8_t version, uint16_t flags);
	void put_str(uint16_t type, const std::string &s);
	void put_u32(uint16_t type, uint32_t v);
	void put_u8(uint16_t type, uint8_t v);
	nlmsghdr *nlh() { return nlh_; }
	/* Attribute type at byte offset @off of the message, or -1. */
	int attr_at(uint32_t off) const;

private:
	std::vector<char> buf_;
	nlmsghdr *nlh_;
};

class GenlSocket
{
public:
	GenlSocket();
	~GenlSocket();
	GenlSocket(const GenlSocket &) = delete;
	GenlSocket &operator=(const GenlSocket &) = delete;

	/* Resolve @name; throws NlError(ENOENT) when it is not registered. */
	void resolve(const std::string &name);
	uint16_t family() const { return family_; }
	uint32_t group(const std::string &name) const;
	void join(uint32_t group);

	using MsgFn = std::function<void(const nlmsghdr *)>;
	/* Send @req, call @fn for every reply message until ACK/DONE. */
	void run(Request &req, const MsgFn &fn);
	/* Receive multicast messages forever (or until @fn returns false). */
	void listen(const std::function<bool(const nlmsghdr *)> &fn);

private:
	mnl_socket *nl_ = nullptr;
	uint32_t portid_ = 0;
	uint32_t seq_ = 0;
	uint16_t family_ = 0;
	std::map<std::string, uint32_t> groups_;
};

} // namespace mrxectl

#endif
