// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "args.h"

#include <cctype>

#include <rdma/mrxe-netlink.h>

namespace mrxectl
{

std::string Args::value_of(std::string_view kw)
{
	if (empty())
		throw UsageError("\"" + std::string(kw) + "\" needs a value");
	return next();
}

bool matches(std::string_view word, std::string_view full)
{
	return !word.empty() && word.size() <= full.size() &&
	       full.substr(0, word.size()) == word;
}

std::optional<uint32_t> parse_u32(std::string_view s)
{
	if (s.empty() || s.size() > 10)
		return std::nullopt;
	uint64_t v = 0;
	for (char c : s) {
		if (c < '0' || c > '9')
			return std::nullopt;
		v = v * 10 + static_cast<unsigned>(c - '0');
	}
	if (v > UINT32_MAX)
		return std::nullopt;
	return static_cast<uint32_t>(v);
}

std::optional<uint32_t> parse_mode(std::string_view s)
{
	if (s == "standard")
		return MRXE_NL_TRANSPORT_STANDARD;
	if (s == "metaroce")
		return MRXE_NL_TRANSPORT_METAROCE;
	if (s == "auto")
		return MRXE_NL_TRANSPORT_AUTO;
	return std::nullopt;
}

std::optional<bool> parse_onoff(std::string_view s)
{
	if (s == "on")
		return true;
	if (s == "off")
		return false;
	return std::nullopt;
}

static uint32_t need_u32(std::string_view kw, const std::string &v)
{
	auto n = parse_u32(v);
	if (!n)
		throw UsageError(std::string(kw) + " \"" + v +
				 "\": not an unsigned 32-bit number");
	return *n;
}

static std::optional<uint32_t> opt_u32(const std::vector<std::string> &argv,
				       size_t &i, std::string_view name)
{
	if (i + 1 >= argv.size())
		throw UsageError("option " + std::string(name) +
				 " needs a value");
	return need_u32(name, argv[++i]);
}

Options parse_options(const std::vector<std::string> &argv, Args &rest)
{
	Options o;
	std::vector<std::string> words;
	for (size_t i = 0; i < argv.size(); i++) {
		const std::string &s = argv[i];
		/* "-1" is a (bad) value, not an option */
		if (s.size() < 2 || s[0] != '-' ||
		    std::isdigit((unsigned char)s[1])) {
			words.push_back(s);
			continue;
		}
		if (s == "-j" || s == "--json")
			o.json = true;
		else if (s == "-p" || s == "--pretty")
			o.pretty = true;
		else if (s == "-s" || s == "--nonzero")
			o.nonzero = true;
		else if (s == "-h" || s == "--help")
			o.help = true;
		else if (s == "-V" || s == "--version")
			o.version = true;
		else if (s == "--watch" || s == "-w") {
			o.watch = *opt_u32(argv, i, s);
			if (!o.watch)
				throw UsageError(s + " 0: the interval must be "
						     "at least 1 second");
		} else if (s == "--count" || s == "-c")
			o.count = *opt_u32(argv, i, s);
		else
			throw UsageError("unknown option \"" + s +
					 "\" (try \"mrxectl help\")");
	}
	rest = Args(std::move(words));
	return o;
}

const std::vector<CcParam> cc_params = {
	{ "rate-max", MRXE_ATTR_DCQCN_RATE_MAX_KBPS, "rate_max_kbps" },
	{ "rate-min", MRXE_ATTR_DCQCN_RATE_MIN_KBPS, "rate_min_kbps" },
	{ "g", MRXE_ATTR_DCQCN_G, "g_65536" },
	{ "alpha-timer", MRXE_ATTR_DCQCN_ALPHA_US, "alpha_timer_us" },
	{ "rate-timer", MRXE_ATTR_DCQCN_TIMER_US, "rate_timer_us" },
	{ "byte-counter", MRXE_ATTR_DCQCN_BYTE_COUNTER_KB, "byte_counter_kb" },
	{ "ai-rate", MRXE_ATTR_DCQCN_AI_KBPS, "ai_rate_kbps" },
	{ "hai-rate", MRXE_ATTR_DCQCN_HAI_KBPS, "hai_rate_kbps" },
	{ "f", MRXE_ATTR_DCQCN_F, "f" },
};

static const CcParam *find_cc_param(std::string_view kw)
{
	for (const auto &c : cc_params)
		if (kw == c.kw)
			return &c;
	return nullptr;
}

DevSet parse_dev_set(Args &a)
{
	DevSet d;
	if (a.empty())
		throw UsageError("dev set: device name missing");
	d.dev = a.next();
	if (a.empty())
		throw UsageError(
			"dev set " + d.dev +
			": nothing to set (mode, paths, window, ecn, cnp-interval)");
	while (!a.empty()) {
		std::string kw = a.next();
		if (kw == "mode") {
			std::string v = a.value_of(kw);
			d.mode = parse_mode(v);
			if (!d.mode)
				throw UsageError("mode \"" + v +
						 "\": expected standard, "
						 "metaroce or auto");
		} else if (kw == "paths") {
			d.paths = need_u32(kw, a.value_of(kw));
		} else if (kw == "window") {
			d.window = need_u32(kw, a.value_of(kw));
		} else if (kw == "ecn") {
			std::string v = a.value_of(kw);
			d.ecn = parse_onoff(v);
			if (!d.ecn)
				throw UsageError("ecn \"" + v +
						 "\": expected on or off");
		} else if (kw == "cnp-interval" || kw == "cnp_interval") {
			d.cnp_interval_us = need_u32(kw, a.value_of(kw));
		} else if (kw == "cc") {
			std::string v = a.value_of(kw);
			if (v == "dcqcn")
				d.cc = MRXE_NL_CC_DCQCN;
			else if (v == "off")
				d.cc = MRXE_NL_CC_OFF;
			else
				throw UsageError("cc \"" + v +
						 "\": expected dcqcn or off");
		} else if (const CcParam *c = find_cc_param(kw)) {
			d.cc_vals.emplace_back(c->attr,
					       need_u32(kw, a.value_of(kw)));
		} else {
			throw UsageError(
				"dev set: unknown argument \"" + kw +
				"\" (mode, paths, window, ecn, cnp-interval, cc, "
				"rate-max, rate-min, g, alpha-timer, "
				"rate-timer, byte-counter, ai-rate, "
				"hai-rate, f)");
		}
	}
	return d;
}

QpSel parse_qp_sel(Args &a, bool need_dev_and_qpn)
{
	QpSel q;
	if (!a.empty() && a.peek() != "qpn")
		q.dev = a.next();
	while (!a.empty()) {
		std::string kw = a.next();
		if (kw == "qpn")
			q.qpn = need_u32(kw, a.value_of(kw));
		else
			throw UsageError("unknown argument \"" + kw +
					 "\" (expected qpn N)");
	}
	if (need_dev_and_qpn && (q.dev.empty() || !q.qpn))
		throw UsageError("path show: needs a device and \"qpn N\"");
	if (q.qpn && q.dev.empty())
		throw UsageError("qpn " + std::to_string(*q.qpn) +
				 ": give the device too (qp show DEV qpn N)");
	return q;
}

std::string_view mode_name(uint32_t mode)
{
	switch (mode) {
	case MRXE_NL_TRANSPORT_STANDARD:
		return "standard";
	case MRXE_NL_TRANSPORT_METAROCE:
		return "metaroce";
	case MRXE_NL_TRANSPORT_AUTO:
		return "auto";
	default:
		return "unknown";
	}
}

std::string_view qp_type_name(uint32_t type)
{
	/* enum ib_qp_type */
	switch (type) {
	case 0:
		return "SMI";
	case 1:
		return "GSI";
	case 2:
		return "RC";
	case 3:
		return "UC";
	case 4:
		return "UD";
	default:
		return "unknown";
	}
}

std::string_view qp_state_name(uint32_t state)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS",
					 "SQD",	  "SQE",  "ERR" };
	return state < 7 ? n[state] : "unknown";
}

std::string_view port_state_name(uint32_t state)
{
	static const char *const n[] = { "NOP",	  "DOWN",   "INIT",
					 "ARMED", "ACTIVE", "ACTIVE_DEFER" };
	return state < 6 ? n[state] : "unknown";
}

std::string_view path_state_name(uint32_t state)
{
	switch (state) {
	case MRXE_PATH_ACTIVE:
		return "active";
	case MRXE_PATH_CONGESTED:
		return "congested";
	case MRXE_PATH_SUSPECT:
		return "suspect";
	case MRXE_PATH_DEAD:
		return "dead";
	default:
		return "unknown";
	}
}

} // namespace mrxectl
