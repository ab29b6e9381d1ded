// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Command-line parsing for mrxectl, free of netlink so that the host unit
 * tests (tests/args_test.cc) can drive it.  Every error is a UsageError
 * whose message names the offending argument.
 */
#ifndef MRXECTL_ARGS_H
#define MRXECTL_ARGS_H

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mrxectl
{

struct UsageError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

/* Global options (anywhere on the line, as "-j" or "--json"). */
struct Options {
	bool json = false;
	bool pretty = false;
	bool nonzero = false; /* -s: stats prints only non-zero counters */
	bool help = false;
	bool version = false;
	uint32_t watch = 0; /* --watch SECS: 0 = once */
	uint32_t count = 0; /* --count N: intervals/events, 0 = forever */
};

/* The remaining words, consumed left to right (iproute2's NEXT_ARG). */
class Args
{
public:
	Args() = default;
	explicit Args(std::vector<std::string> v) : v_(std::move(v)) {}
	bool empty() const { return i_ >= v_.size(); }
	const std::string &peek() const { return v_.at(i_); }
	std::string next() { return v_.at(i_++); }
	/* Value of keyword @kw: the next word, or an error naming @kw. */
	std::string value_of(std::string_view kw);
	size_t left() const { return v_.size() - i_; }

private:
	std::vector<std::string> v_;
	size_t i_ = 0;
};

/* Split argv[1..] into options and words. */
Options parse_options(const std::vector<std::string> &argv, Args &rest);

/* iproute2's matches(): @word is a non-empty prefix of @full. */
bool matches(std::string_view word, std::string_view full);

/* Strict unsigned decimal (no sign, no trailing junk, fits 32 bits). */
std::optional<uint32_t> parse_u32(std::string_view s);
/* "standard" | "metaroce" | "auto" -> MRXE_NL_TRANSPORT_* */
std::optional<uint32_t> parse_mode(std::string_view s);
std::optional<bool> parse_onoff(std::string_view s);

/*
 * Congestion control parameters of "dev set" / "dev show": keyword, netlink
 * attribute (MRXE_ATTR_DCQCN_*), JSON/text field name.
 */
struct CcParam {
	const char *kw;
	int attr;
	const char *field;
};
extern const std::vector<CcParam> cc_params;

/*
 * "dev set DEV mode M paths N window N ecn on|off cnp-interval US cc dcqcn|off
 *  rate-max KBPS ..." (cc_params)
 */
struct DevSet {
	std::string dev;
	std::optional<uint32_t> mode, paths, window, cnp_interval_us;
	std::optional<bool> ecn;
	std::optional<uint8_t> cc; /* MRXE_NL_CC_* */
	std::vector<std::pair<int, uint32_t>> cc_vals; /* attr, value */
};
DevSet parse_dev_set(Args &a);

/* "qp show [DEV] [qpn N]" and "path show DEV qpn N" */
struct QpSel {
	std::string dev; /* empty: all devices */
	std::optional<uint32_t> qpn;
};
QpSel parse_qp_sel(Args &a, bool need_dev_and_qpn);

/* Names printed for kernel enum values. */
std::string_view mode_name(uint32_t mode);
std::string_view qp_type_name(uint32_t type);
std::string_view qp_state_name(uint32_t state);
std::string_view port_state_name(uint32_t state);
std::string_view path_state_name(uint32_t state);

} // namespace mrxectl

#endif
