// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* mrxectl argument parsing: options, keywords, values, error messages. */
#include <gtest/gtest.h>

#include <rdma/mrxe-netlink.h>

#include "args.h"

using namespace mrxectl;

static std::string usage_error(const std::function<void()> &fn)
{
	try {
		fn();
	} catch (const UsageError &e) {
		return e.what();
	}
	return "(no error)";
}

TEST(ParseU32, Strict)
{
	EXPECT_EQ(parse_u32("0"), 0u);
	EXPECT_EQ(parse_u32("16"), 16u);
	EXPECT_EQ(parse_u32("4294967295"), 4294967295u);
	EXPECT_FALSE(parse_u32("4294967296"));
	EXPECT_FALSE(parse_u32("99999999999"));
	EXPECT_FALSE(parse_u32(""));
	EXPECT_FALSE(parse_u32("-1"));
	EXPECT_FALSE(parse_u32("+1"));
	EXPECT_FALSE(parse_u32("1x"));
	EXPECT_FALSE(parse_u32(" 1"));
	EXPECT_FALSE(parse_u32("0x10"));
}

TEST(ParseMode, Names)
{
	EXPECT_EQ(parse_mode("standard"), (uint32_t)MRXE_NL_TRANSPORT_STANDARD);
	EXPECT_EQ(parse_mode("metaroce"), (uint32_t)MRXE_NL_TRANSPORT_METAROCE);
	EXPECT_EQ(parse_mode("auto"), (uint32_t)MRXE_NL_TRANSPORT_AUTO);
	EXPECT_FALSE(parse_mode("Standard"));
	EXPECT_FALSE(parse_mode(""));
	EXPECT_FALSE(parse_mode("fast"));
	for (uint32_t m = 1; m <= 3; m++)
		EXPECT_EQ(parse_mode(mode_name(m)), m);
}

TEST(ParseOnOff, Values)
{
	EXPECT_EQ(parse_onoff("on"), true);
	EXPECT_EQ(parse_onoff("off"), false);
	EXPECT_FALSE(parse_onoff("1"));
	EXPECT_FALSE(parse_onoff("yes"));
}

TEST(Options, Anywhere)
{
	Args rest;
	Options o = parse_options({ "-j", "stats", "mrxe0", "-s", "--watch",
				    "2", "--count", "3", "-p" },
				  rest);
	EXPECT_TRUE(o.json);
	EXPECT_TRUE(o.pretty);
	EXPECT_TRUE(o.nonzero);
	EXPECT_EQ(o.watch, 2u);
	EXPECT_EQ(o.count, 3u);
	ASSERT_EQ(rest.left(), 2u);
	EXPECT_EQ(rest.next(), "stats");
	EXPECT_EQ(rest.next(), "mrxe0");
}

TEST(Options, Errors)
{
	Args rest;
	EXPECT_EQ(usage_error([&] { parse_options({ "-x" }, rest); }),
		  "unknown option \"-x\" (try \"mrxectl help\")");
	EXPECT_EQ(usage_error([&] { parse_options({ "--watch" }, rest); }),
		  "option --watch needs a value");
	EXPECT_EQ(usage_error([&] {
			  parse_options({ "--watch", "0" }, rest);
		  }),
		  "--watch 0: the interval must be at least 1 second");
	EXPECT_EQ(usage_error([&] {
			  parse_options({ "--count", "z" }, rest);
		  }),
		  "--count \"z\": not an unsigned 32-bit number");
}

TEST(Matches, Prefix)
{
	EXPECT_TRUE(matches("sh", "show"));
	EXPECT_TRUE(matches("show", "show"));
	EXPECT_FALSE(matches("shows", "show"));
	EXPECT_FALSE(matches("", "show"));
	EXPECT_FALSE(matches("x", "show"));
}

TEST(DevSet, AllKeywords)
{
	Args a({ "roce0", "mode", "standard", "paths", "4", "ecn", "on",
		 "cnp-interval", "100" });
	DevSet d = parse_dev_set(a);
	EXPECT_EQ(d.dev, "roce0");
	EXPECT_EQ(d.mode, (uint32_t)MRXE_NL_TRANSPORT_STANDARD);
	EXPECT_EQ(d.paths, 4u);
	EXPECT_EQ(d.ecn, true);
	EXPECT_EQ(d.cnp_interval_us, 100u);
}

TEST(DevSet, RangesAreTheKernelsJob)
{
	/* 0 and 17 parse; the kernel's policy refuses them (one source). */
	Args a({ "x", "paths", "0" });
	EXPECT_EQ(parse_dev_set(a).paths, 0u);
	Args b({ "x", "paths", "17" });
	EXPECT_EQ(parse_dev_set(b).paths, 17u);
}

TEST(DevSet, ErrorsNameTheArgument)
{
	auto err = [](std::vector<std::string> v) {
		return usage_error([&] {
			Args a(v);
			parse_dev_set(a);
		});
	};
	EXPECT_EQ(err({}), "dev set: device name missing");
	EXPECT_EQ(err({ "x" }),
		  "dev set x: nothing to set (mode, paths, window, ecn, cnp-interval)");
	EXPECT_EQ(err({ "x", "mode", "fast" }),
		  "mode \"fast\": expected standard, metaroce or auto");
	EXPECT_EQ(err({ "x", "mode" }), "\"mode\" needs a value");
	{
		Args rest;
		Options o = parse_options({ "dev", "set", "x", "paths", "-1" },
					  rest);
		EXPECT_FALSE(o.json);
		rest.next();
		rest.next();
		EXPECT_EQ(usage_error([&] { parse_dev_set(rest); }),
			  "paths \"-1\": not an unsigned 32-bit number");
	}
	EXPECT_EQ(err({ "x", "window", "big" }),
		  "window \"big\": not an unsigned 32-bit number");
	EXPECT_EQ(err({ "x", "paths", "two" }),
		  "paths \"two\": not an unsigned 32-bit number");
	EXPECT_EQ(err({ "x", "ecn", "maybe" }),
		  "ecn \"maybe\": expected on or off");
	EXPECT_EQ(err({ "x", "colour", "red" }),
		  "dev set: unknown argument \"colour\" (mode, paths, window, ecn, "
		  "cnp-interval, cc, rate-max, rate-min, g, alpha-timer, "
		  "rate-timer, byte-counter, ai-rate, hai-rate, f)");
	EXPECT_EQ(err({ "x", "cc", "fast" }),
		  "cc \"fast\": expected dcqcn or off");
	EXPECT_EQ(err({ "x", "rate-max", "-5" }),
		  "rate-max \"-5\": not an unsigned 32-bit number");
}

TEST(DevSet, CongestionControl)
{
	Args a({ "roce0", "cc", "dcqcn", "rate-max", "30000", "g", "256",
		 "f", "5" });
	DevSet d = parse_dev_set(a);
	EXPECT_EQ(d.cc, MRXE_NL_CC_DCQCN);
	ASSERT_EQ(d.cc_vals.size(), 3u);
	EXPECT_EQ(d.cc_vals[0], std::make_pair(int(MRXE_ATTR_DCQCN_RATE_MAX_KBPS),
					       30000u));
	EXPECT_EQ(d.cc_vals[1], std::make_pair(int(MRXE_ATTR_DCQCN_G), 256u));
	EXPECT_EQ(d.cc_vals[2], std::make_pair(int(MRXE_ATTR_DCQCN_F), 5u));
	Args off({ "roce0", "cc", "off" });
	EXPECT_EQ(parse_dev_set(off).cc, MRXE_NL_CC_OFF);
}

TEST(QpSel, Forms)
{
	Args a;
	QpSel q = parse_qp_sel(a, false);
	EXPECT_TRUE(q.dev.empty());
	EXPECT_FALSE(q.qpn);

	Args b({ "mrxe0" });
	EXPECT_EQ(parse_qp_sel(b, false).dev, "mrxe0");

	Args c({ "mrxe0", "qpn", "17" });
	q = parse_qp_sel(c, true);
	EXPECT_EQ(q.dev, "mrxe0");
	EXPECT_EQ(q.qpn, 17u);

	EXPECT_EQ(usage_error([] {
			  Args d({ "qpn", "17" });
			  parse_qp_sel(d, false);
		  }),
		  "qpn 17: give the device too (qp show DEV qpn N)");
	EXPECT_EQ(usage_error([] {
			  Args d({ "mrxe0" });
			  parse_qp_sel(d, true);
		  }),
		  "path show: needs a device and \"qpn N\"");
	EXPECT_EQ(usage_error([] {
			  Args d({ "mrxe0", "qpn" });
			  parse_qp_sel(d, false);
		  }),
		  "\"qpn\" needs a value");
	EXPECT_EQ(usage_error([] {
			  Args d({ "mrxe0", "psn", "1" });
			  parse_qp_sel(d, false);
		  }),
		  "unknown argument \"psn\" (expected qpn N)");
}

TEST(Names, Enums)
{
	EXPECT_EQ(qp_type_name(2), "RC");
	EXPECT_EQ(qp_type_name(4), "UD");
	EXPECT_EQ(qp_type_name(99), "unknown");
	EXPECT_EQ(qp_state_name(3), "RTS");
	EXPECT_EQ(qp_state_name(6), "ERR");
	EXPECT_EQ(qp_state_name(7), "unknown");
	EXPECT_EQ(port_state_name(4), "ACTIVE");
	EXPECT_EQ(path_state_name(MRXE_PATH_ACTIVE), "active");
}
