// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxectl: configure mrxe devices and watch what the transport does, over
 * the "mrxe" generic netlink family (rdma/mrxe-netlink.h).  Modelled on
 * iproute2's rdma tool: a table of objects, each a table of commands, one
 * Printer for text and JSON.  See mrxectl.8 and Documentation/mrxectl.rst.
 */
#include <arpa/inet.h>
#include <algorithm>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <span>
#include <thread>
#include <utility>
#include <unistd.h>

#include <rdma/mrxe-netlink.h>
#include <linux/genetlink.h>

#include "args.h"
#include "nl.h"
#include "print.h"

using namespace mrxectl;

namespace
{

#ifndef MRXECTL_VERSION
#define MRXECTL_VERSION "1"
#endif

struct Ctx {
	Options opt;
	Printer *pr;
	GenlSocket *sock = nullptr;
	std::string cmd; /* "dev set", for error messages */
};

/* Argument name for the attribute the kernel complained about. */
const char *attr_arg_name(int attr)
{
	switch (attr) {
	case MRXE_ATTR_IBDEV_NAME:
		return "device";
	case MRXE_ATTR_TRANSPORT_MODE:
		return "mode";
	case MRXE_ATTR_NUM_PATHS:
		return "paths";
	case MRXE_ATTR_WINDOW:
		return "window";
	case MRXE_ATTR_ECN:
		return "ecn";
	case MRXE_ATTR_CNP_INTERVAL_US:
		return "cnp-interval";
	case MRXE_ATTR_QPN:
		return "qpn";
	case MRXE_ATTR_CC:
		return "cc";
	default:
		for (const auto &c : cc_params)
			if (c.attr == attr)
				return c.kw;
		return nullptr;
	}
}

GenlSocket &sock(Ctx &c)
{
	if (!c.sock) {
		c.sock = new GenlSocket();
		c.sock->resolve(MRXE_GENL_NAME);
	}
	return *c.sock;
}

Request request(Ctx &c, uint8_t cmd, bool dump)
{
	return Request(sock(c).family(), cmd, MRXE_GENL_VERSION,
		       dump ? NLM_F_DUMP : 0);
}

std::string str_attr(const Attrs &tb, int t)
{
	return tb[t] ? mnl_attr_get_str(tb[t]) : "";
}

uint32_t u32_attr(const Attrs &tb, int t)
{
	return tb[t] ? mnl_attr_get_u32(tb[t]) : 0;
}

uint8_t u8_attr(const Attrs &tb, int t)
{
	return tb[t] ? mnl_attr_get_u8(tb[t]) : 0;
}

/* ---- dev ---- */

using Counters = std::vector<std::pair<std::string, uint64_t>>;

struct DevInfo {
	std::string dev, netdev;
	uint32_t index = 0, mode = 0, paths = 0, window = 0, cnp = 0, qps = 0;
	uint8_t port_state = 0;
	bool ecn = false;
	uint8_t cc = 0;
	std::vector<std::pair<std::string, uint32_t>> cc_vals;
	Counters stats;
};

/* MRXE_ATTR_STATS of a device or QP message: counter names and values. */
Counters parse_stats(const Attrs &tb)
{
	Counters v;
	if (!tb[MRXE_ATTR_STATS])
		return v;
	for_each_nested(tb[MRXE_ATTR_STATS], [&](const nlattr *s) {
		Attrs st = parse_nested(s, MRXE_ATTR_MAX);
		if (st[MRXE_ATTR_STAT_NAME] && st[MRXE_ATTR_STAT_VALUE])
			v.emplace_back(
				mnl_attr_get_str(st[MRXE_ATTR_STAT_NAME]),
				mnl_attr_get_u64(st[MRXE_ATTR_STAT_VALUE]));
	});
	return v;
}

DevInfo parse_dev(const nlmsghdr *m)
{
	Attrs tb = parse_attrs(m, sizeof(genlmsghdr), MRXE_ATTR_MAX);
	DevInfo d;
	d.dev = str_attr(tb, MRXE_ATTR_IBDEV_NAME);
	d.netdev = str_attr(tb, MRXE_ATTR_NETDEV_NAME);
	d.index = u32_attr(tb, MRXE_ATTR_IBDEV_INDEX);
	d.mode = u32_attr(tb, MRXE_ATTR_TRANSPORT_MODE);
	d.paths = u32_attr(tb, MRXE_ATTR_NUM_PATHS);
	d.window = u32_attr(tb, MRXE_ATTR_WINDOW);
	d.cnp = u32_attr(tb, MRXE_ATTR_CNP_INTERVAL_US);
	d.qps = u32_attr(tb, MRXE_ATTR_NUM_QPS);
	d.port_state = u8_attr(tb, MRXE_ATTR_PORT_STATE);
	d.ecn = u8_attr(tb, MRXE_ATTR_ECN);
	d.cc = u8_attr(tb, MRXE_ATTR_CC);
	for (const auto &c : cc_params)
		if (tb[c.attr])
			d.cc_vals.emplace_back(c.field, u32_attr(tb, c.attr));
	d.stats = parse_stats(tb);
	return d;
}

/* All devices of this namespace, or the one named @dev. */
std::vector<DevInfo> get_devs(Ctx &c, const std::string &dev)
{
	std::vector<DevInfo> v;
	Request r = request(c, MRXE_CMD_DEV_GET, dev.empty());
	if (!dev.empty())
		r.put_str(MRXE_ATTR_IBDEV_NAME, dev);
	sock(c).run(r, [&](const nlmsghdr *m) { v.push_back(parse_dev(m)); });
	return v;
}

void print_dev(Printer &p, const DevInfo &d)
{
	p.begin_record();
	p.field("index", d.index);
	p.name("dev", d.dev);
	p.field("netdev", d.netdev);
	p.field("port_state", port_state_name(d.port_state));
	p.field("mode", mode_name(d.mode));
	p.field("paths", d.paths);
	if (d.window)
		p.field("window", d.window);
	p.flag("ecn", d.ecn);
	p.field("cnp_interval_us", d.cnp);
	p.field("qps", d.qps);
	p.field("cc", d.cc == MRXE_NL_CC_DCQCN ? "dcqcn" : "off");
	if (!d.cc_vals.empty()) {
		p.begin_object("dcqcn");
		for (const auto &[name, v] : d.cc_vals)
			p.field(name, v);
		p.end_object();
	}
	p.end_record();
}

std::string one_dev_arg(Args &a, const char *what)
{
	std::string dev;
	if (!a.empty())
		dev = a.next();
	if (!a.empty())
		throw UsageError(std::string(what) +
				 ": unexpected argument \"" + a.peek() + "\"");
	return dev;
}

int dev_show(Ctx &c, Args &a)
{
	std::string dev = one_dev_arg(a, "dev show");
	auto devs = get_devs(c, dev);
	c.pr->begin_list();
	for (auto &d : devs)
		print_dev(*c.pr, d);
	c.pr->end_list();
	return 0;
}

int dev_set(Ctx &c, Args &a)
{
	DevSet s = parse_dev_set(a);
	Request r = request(c, MRXE_CMD_DEV_SET, false);
	r.put_str(MRXE_ATTR_IBDEV_NAME, s.dev);
	if (s.mode)
		r.put_u32(MRXE_ATTR_TRANSPORT_MODE, *s.mode);
	if (s.paths)
		r.put_u32(MRXE_ATTR_NUM_PATHS, *s.paths);
	if (s.window)
		r.put_u32(MRXE_ATTR_WINDOW, *s.window);
	if (s.ecn)
		r.put_u8(MRXE_ATTR_ECN, *s.ecn);
	if (s.cnp_interval_us)
		r.put_u32(MRXE_ATTR_CNP_INTERVAL_US, *s.cnp_interval_us);
	if (s.cc)
		r.put_u8(MRXE_ATTR_CC, *s.cc);
	for (const auto &[attr, v] : s.cc_vals)
		r.put_u32(attr, v);
	c.cmd = "dev set " + s.dev;
	sock(c).run(r, [](const nlmsghdr *) {});
	return 0;
}

/* ---- qp / path ---- */

/*
 * One path: index, UDP source port, state, SRTT, window and the per-path
 * counters a MetaRoCE sender reports (MRXE_ATTR_STATS inside the path).
 */
void print_path_fields(Printer &p, const Attrs &pt)
{
	p.field("path", u32_attr(pt, MRXE_ATTR_PATH_INDEX));
	if (pt[MRXE_ATTR_PATH_SPORT])
		p.field("sport", static_cast<uint32_t>(mnl_attr_get_u16(
					 pt[MRXE_ATTR_PATH_SPORT])));
	p.field("state", path_state_name(u32_attr(pt, MRXE_ATTR_PATH_STATE)));
	if (pt[MRXE_ATTR_PATH_RTT_US])
		p.field("rtt_us", u32_attr(pt, MRXE_ATTR_PATH_RTT_US));
	if (pt[MRXE_ATTR_PATH_CWND])
		p.field("cwnd", u32_attr(pt, MRXE_ATTR_PATH_CWND));
	if (!pt[MRXE_ATTR_STATS])
		return;
	for_each_nested(pt[MRXE_ATTR_STATS], [&](const nlattr *s) {
		Attrs st = parse_nested(s, MRXE_ATTR_MAX);
		if (st[MRXE_ATTR_STAT_NAME] && st[MRXE_ATTR_STAT_VALUE])
			p.field(mnl_attr_get_str(st[MRXE_ATTR_STAT_NAME]),
				static_cast<uint64_t>(mnl_attr_get_u64(
					st[MRXE_ATTR_STAT_VALUE])));
	});
}

void print_paths(Printer &p, const Attrs &tb)
{
	if (!tb[MRXE_ATTR_PATHS])
		return;
	p.begin_array("path_list");
	for_each_nested(tb[MRXE_ATTR_PATHS], [&](const nlattr *n) {
		Attrs pt = parse_nested(n, MRXE_ATTR_MAX);
		p.begin_element();
		print_path_fields(p, pt);
		p.end_element();
	});
	p.end_array();
}

void print_qp(Printer &p, const nlmsghdr *m)
{
	Attrs tb = parse_attrs(m, sizeof(genlmsghdr), MRXE_ATTR_MAX);
	p.begin_record();
	p.name("dev", str_attr(tb, MRXE_ATTR_IBDEV_NAME));
	p.field("qpn", u32_attr(tb, MRXE_ATTR_QPN));
	p.field("type", qp_type_name(u8_attr(tb, MRXE_ATTR_QP_TYPE)));
	p.field("state", qp_state_name(u8_attr(tb, MRXE_ATTR_QP_STATE)));
	p.field("mode", mode_name(u32_attr(tb, MRXE_ATTR_TRANSPORT_MODE)));
	p.field("paths", u32_attr(tb, MRXE_ATTR_NUM_PATHS));
	if (tb[MRXE_ATTR_WINDOW])
		p.field("window", u32_attr(tb, MRXE_ATTR_WINDOW));
	p.field("dest_qpn", u32_attr(tb, MRXE_ATTR_DEST_QPN));
	char buf[INET6_ADDRSTRLEN] = "";
	if (tb[MRXE_ATTR_PEER_ADDR4])
		inet_ntop(AF_INET,
			  mnl_attr_get_payload(tb[MRXE_ATTR_PEER_ADDR4]), buf,
			  sizeof(buf));
	else if (tb[MRXE_ATTR_PEER_ADDR6])
		inet_ntop(AF_INET6,
			  mnl_attr_get_payload(tb[MRXE_ATTR_PEER_ADDR6]), buf,
			  sizeof(buf));
	if (buf[0])
		p.field("peer", buf);
	p.field("sq_psn", u32_attr(tb, MRXE_ATTR_SQ_PSN));
	p.field("comp_psn", u32_attr(tb, MRXE_ATTR_COMP_PSN));
	p.field("rq_psn", u32_attr(tb, MRXE_ATTR_RQ_PSN));
	if (tb[MRXE_ATTR_QP_RATE_KBPS])
		p.field("rate_kbps", static_cast<uint64_t>(mnl_attr_get_u64(
					     tb[MRXE_ATTR_QP_RATE_KBPS])));
	if (tb[MRXE_ATTR_QP_PRIO])
		p.field("prio", static_cast<uint32_t>(u8_attr(tb, MRXE_ATTR_QP_PRIO)));
	/* a MetaRoCE requester's loss-recovery estimators */
	static constexpr std::pair<int, const char *> est[] = {
		{ MRXE_ATTR_QP_SRTT_US, "srtt_us" },
		{ MRXE_ATTR_QP_MIN_RTT_US, "min_rtt_us" },
		{ MRXE_ATTR_QP_RTO_US, "rto_us" },
		{ MRXE_ATTR_QP_REO_WND_US, "reo_wnd_us" },
		{ MRXE_ATTR_QP_RSP_REO_WND_US, "rsp_reo_wnd_us" },
		{ MRXE_ATTR_QP_RSP_WND, "rsp_wnd" },
	};
	for (const auto &[attr, name] : est)
		if (tb[attr])
			p.field(name, u32_attr(tb, attr));
	print_paths(p, tb);
	/* the device counters this QP moved (zeros left out) */
	Counters st = parse_stats(tb);
	if (std::any_of(st.begin(), st.end(),
			[](const auto &c) { return c.second != 0; })) {
		p.begin_object("counters");
		for (const auto &[name, v] : st)
			if (v)
				p.field(name, v);
		p.end_object();
	}
	p.end_record();
}

int qp_show(Ctx &c, Args &a)
{
	QpSel q = parse_qp_sel(a, false);
	Request r = request(c, MRXE_CMD_QP_GET, !q.qpn);
	if (!q.dev.empty())
		r.put_str(MRXE_ATTR_IBDEV_NAME, q.dev);
	if (q.qpn)
		r.put_u32(MRXE_ATTR_QPN, *q.qpn);
	c.pr->begin_list();
	sock(c).run(r, [&](const nlmsghdr *m) { print_qp(*c.pr, m); });
	c.pr->end_list();
	return 0;
}

int path_show(Ctx &c, Args &a)
{
	QpSel q = parse_qp_sel(a, true);
	Request r = request(c, MRXE_CMD_PATH_GET, false);
	r.put_str(MRXE_ATTR_IBDEV_NAME, q.dev);
	r.put_u32(MRXE_ATTR_QPN, *q.qpn);
	Printer &p = *c.pr;
	p.begin_list();
	sock(c).run(r, [&](const nlmsghdr *m) {
		Attrs tb = parse_attrs(m, sizeof(genlmsghdr), MRXE_ATTR_MAX);
		if (!tb[MRXE_ATTR_PATHS])
			return;
		for_each_nested(tb[MRXE_ATTR_PATHS], [&](const nlattr *n) {
			Attrs pt = parse_nested(n, MRXE_ATTR_MAX);
			p.begin_record();
			p.name("dev", str_attr(tb, MRXE_ATTR_IBDEV_NAME));
			p.field("qpn", u32_attr(tb, MRXE_ATTR_QPN));
			print_path_fields(p, pt);
			p.end_record();
		});
	});
	p.end_list();
	return 0;
}

/* ---- stats ---- */

volatile sig_atomic_t g_stop;

void on_signal(int)
{
	g_stop = 1;
}

void print_counters(Ctx &c, const DevInfo &d, const DevInfo *prev,
		    uint32_t secs)
{
	Printer &p = *c.pr;
	p.begin_record();
	p.name("dev", d.dev);
	if (prev)
		p.field("interval_s", secs);
	p.begin_object("counters");
	for (size_t i = 0; i < d.stats.size(); i++) {
		const auto &[name, v] = d.stats[i];
		if (!prev) {
			if (!c.opt.nonzero || v)
				p.field(name, v);
			continue;
		}
		uint64_t old =
			i < prev->stats.size() ? prev->stats[i].second : 0;
		uint64_t delta = v - old;
		if (c.opt.nonzero && !delta)
			continue;
		if (p.json()) {
			p.begin_object(name);
			p.field("value", v);
			p.field("delta", delta);
			p.real("rate", static_cast<double>(delta) / secs);
			p.end_object();
		} else {
			p.field(name, std::to_string(delta) + " (" +
					      std::to_string(delta / secs) +
					      "/s, total " + std::to_string(v) +
					      ")");
		}
	}
	p.end_object();
	p.end_record();
}

int stats(Ctx &c, Args &a)
{
	std::string dev = one_dev_arg(a, "stats");
	auto devs = get_devs(c, dev);
	if (!c.opt.watch) {
		c.pr->begin_list();
		for (auto &d : devs)
			print_counters(c, d, nullptr, 0);
		c.pr->end_list();
		return 0;
	}
	std::signal(SIGINT, on_signal);
	std::signal(SIGTERM, on_signal);
	/* --watch: one JSON list (or text block) per interval, each line
	 * flushed */
	for (uint32_t n = 0; !g_stop && (!c.opt.count || n < c.opt.count);
	     n++) {
		for (uint32_t s = 0; s < c.opt.watch * 10 && !g_stop; s++)
			usleep(100000);
		if (g_stop)
			break;
		auto now = get_devs(c, dev);
		c.pr->begin_list();
		for (auto &d : now) {
			const DevInfo *prev = nullptr;
			for (auto &o : devs)
				if (o.dev == d.dev)
					prev = &o;
			DevInfo zero;
			zero.dev = d.dev;
			print_counters(c, d, prev ? prev : &zero, c.opt.watch);
		}
		c.pr->end_list();
		std::cout.flush();
		devs = std::move(now);
	}
	return 0;
}

/* ---- monitor ---- */

bool print_event(Ctx &c, const nlmsghdr *m)
{
	auto *g = static_cast<const genlmsghdr *>(mnl_nlmsg_get_payload(m));
	if (g->cmd != MRXE_CMD_EVENT)
		return true;
	Attrs tb = parse_attrs(m, sizeof(genlmsghdr), MRXE_ATTR_MAX);
	Printer &p = *c.pr;
	uint32_t type = u32_attr(tb, MRXE_ATTR_EVENT_TYPE);
	p.begin_record();
	switch (type) {
	case MRXE_EVENT_QP_ERROR:
		p.name("event", "qp_error");
		p.field("dev", str_attr(tb, MRXE_ATTR_IBDEV_NAME));
		p.field("qpn", u32_attr(tb, MRXE_ATTR_QPN));
		p.field("type", qp_type_name(u8_attr(tb, MRXE_ATTR_QP_TYPE)));
		p.field("old_state",
			qp_state_name(u8_attr(tb, MRXE_ATTR_QP_OLD_STATE)));
		break;
	case MRXE_EVENT_DEV_CONFIG:
		p.name("event", "dev_config");
		p.field("dev", str_attr(tb, MRXE_ATTR_IBDEV_NAME));
		p.field("mode",
			mode_name(u32_attr(tb, MRXE_ATTR_TRANSPORT_MODE)));
		p.field("paths", u32_attr(tb, MRXE_ATTR_NUM_PATHS));
		p.flag("ecn", u8_attr(tb, MRXE_ATTR_ECN));
		p.field("cnp_interval_us",
			u32_attr(tb, MRXE_ATTR_CNP_INTERVAL_US));
		break;
	default:
		p.name("event", "unknown");
		p.field("event_type", type);
		p.field("dev", str_attr(tb, MRXE_ATTR_IBDEV_NAME));
		break;
	}
	p.end_record();
	std::cout.flush();
	return true;
}

int monitor(Ctx &c, Args &a)
{
	if (!a.empty())
		throw UsageError("monitor: unexpected argument \"" + a.peek() +
				 "\"");
	GenlSocket &s = sock(c);
	s.join(s.group(MRXE_GENL_MCGRP_EVENTS));
	uint32_t seen = 0;
	s.listen([&](const nlmsghdr *m) {
		print_event(c, m);
		return !c.opt.count || ++seen < c.opt.count;
	});
	return 0;
}

/* ---- tables ---- */

struct Cmd {
	const char *name;
	int (*fn)(Ctx &, Args &);
	const char *usage;
};

struct Obj {
	const char *name;
	std::span<const Cmd> cmds;
	const char *help;
	bool cmd_optional = false;
};

const Cmd dev_cmds[] = {
	{ "show", dev_show, "mrxectl [-j] [-p] dev show [DEV]" },
	{ "set", dev_set,
	  "mrxectl dev set DEV [mode standard|metaroce|auto] [paths 1-16]\n"
	  "                    [window 16-4096] [ecn on|off]\n"
	  "                    [cnp-interval 1-1000000]\n"
	  "                    [cc dcqcn|off] [rate-max KBPS] [rate-min KBPS]\n"
	  "                    [g 1-65536] [alpha-timer US] [rate-timer US]\n"
	  "                    [byte-counter KIB] [ai-rate KBPS] [hai-rate KBPS]\n"
	  "                    [f 1-64]" },
};
const Cmd qp_cmds[] = {
	{ "show", qp_show, "mrxectl [-j] [-p] qp show [DEV] [qpn N]" },
};
const Cmd path_cmds[] = {
	{ "show", path_show, "mrxectl [-j] [-p] path show DEV qpn N" },
};
const Cmd stats_cmds[] = {
	{ "show", stats,
	  "mrxectl [-j] [-p] stats [show] [DEV] [-s] [--watch SECS [--count "
	  "N]]" },
};
const Cmd monitor_cmds[] = {
	{ "show", monitor, "mrxectl [-j] monitor [--count N]" },
};

const Obj objects[] = {
	{ "dev", dev_cmds, "device defaults: transport mode, paths, ECN" },
	{ "qp", qp_cmds, "queue pairs: state, mode, peer, PSNs, paths" },
	{ "path", path_cmds, "paths of one QP: UDP source port, state" },
	{ "stats", stats_cmds,
	  "device counters (the hw_counters of rdma statistic); "
	  "-s: non-zero only; --watch: deltas per interval",
	  true },
	{ "monitor", monitor_cmds,
	  "events: QP moved to ERROR, device config changed", true },
};

void usage_obj(const Obj &o, std::ostream &os)
{
	os << "mrxectl " << o.name << ": " << o.help << "\nUsage:\n";
	for (const Cmd &c : o.cmds)
		os << "  " << c.usage << "\n";
}

void usage(std::ostream &os)
{
	os << "Usage: mrxectl [OPTIONS] OBJECT { COMMAND | help }\n"
	      "       mrxectl help\n"
	      "where  OBJECT := { dev | qp | path | stats | monitor }\n"
	      "       OPTIONS := { -j[son] | -p[retty] | -s | --watch SECS |"
	      " --count N | -V[ersion] }\n\n";
	for (const Obj &o : objects)
		usage_obj(o, os);
}

int dispatch(Ctx &c, Args &a)
{
	if (a.empty() && !c.opt.help) {
		usage(std::cerr); /* no object: an error */
		return 1;
	}
	if (a.empty() || a.peek() == "help") {
		usage(std::cout);
		return 0;
	}
	std::string oname = a.next();
	const Obj *obj = nullptr;
	for (const Obj &o : objects)
		if (matches(oname, o.name)) {
			obj = &o;
			break;
		}
	if (!obj)
		throw UsageError("unknown object \"" + oname +
				 "\" (dev, qp, path, stats, monitor)");
	c.cmd = obj->name;
	if (c.opt.help || (!a.empty() && a.peek() == "help")) {
		usage_obj(*obj, std::cout);
		return 0;
	}
	/*
	 * No command: the first one (show), as "rdma dev".  stats and
	 * monitor take a device or nothing after them, so their command name
	 * is optional and only matched in full (a device may be called "s").
	 */
	const Cmd *cmd = &obj->cmds[0];
	if (!a.empty()) {
		const Cmd *found = nullptr;
		for (const Cmd &k : obj->cmds)
			if (obj->cmd_optional ? a.peek() == k.name
					      : matches(a.peek(), k.name)) {
				found = &k;
				break;
			}
		if (found) {
			a.next();
			cmd = found;
		} else if (!obj->cmd_optional) {
			throw UsageError(std::string(obj->name) +
					 ": unknown command \"" + a.peek() +
					 "\" (try \"mrxectl " + obj->name +
					 " help\")");
		}
	}
	c.cmd = std::string(obj->name) + " " + cmd->name;
	return cmd->fn(c, a);
}

} // namespace

int main(int argc, char **argv)
{
	std::vector<std::string> av(argv + 1, argv + argc);
	Ctx c;
	int rc;
	try {
		Args rest;
		c.opt = parse_options(av, rest);
		if (c.opt.version) {
			std::cout << "mrxectl " MRXECTL_VERSION
				     " (netlink family "
				  << MRXE_GENL_NAME << " v" << MRXE_GENL_VERSION
				  << ")\n";
			return 0;
		}
		Printer pr(std::cout, c.opt.json, c.opt.pretty);
		c.pr = &pr;
		rc = dispatch(c, rest);
	} catch (const UsageError &e) {
		std::cerr << "mrxectl: " << e.what() << "\n";
		rc = 1;
	} catch (const NlError &e) {
		std::cout.flush();
		std::cerr << "mrxectl: " << c.cmd;
		if (const char *arg = attr_arg_name(e.attr))
			std::cerr << ": " << arg;
		std::cerr << ": " << std::strerror(e.err);
		if (e.attr == NlError::LOCAL)
			std::cerr << ": " << e.kmsg;
		else if (!e.kmsg.empty())
			std::cerr << " (kernel: " << e.kmsg << ")";
		std::cerr << "\n";
		rc = 2;
	}
	delete c.sock;
	return rc;
}
