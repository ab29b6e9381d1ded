// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* The one print path: the same calls give text or (pretty) JSON. */
#include <gtest/gtest.h>

#include <sstream>

#include "print.h"

using namespace mrxectl;

/* A dev-show-like record with a nested object and an array. */
static std::string render(bool json, bool pretty)
{
	std::ostringstream os;
	Printer p(os, json, pretty);
	p.begin_list();
	p.begin_record();
	p.field("index", 3u);
	p.name("dev", "roce0");
	p.field("mode", "standard");
	p.flag("ecn", true);
	p.begin_object("counters");
	p.field("sent_pkts", uint64_t(18446744073709551615ull));
	p.field("rcvd_pkts", uint64_t(0));
	p.end_object();
	p.begin_array("path_list");
	p.begin_element();
	p.field("path", 0u);
	p.field("sport", 49152u);
	p.end_element();
	p.end_array();
	p.end_record();
	p.begin_record();
	p.name("dev", "x");
	p.end_record();
	p.end_list();
	return os.str();
}

TEST(Printer, Json)
{
	EXPECT_EQ(
		render(true, false),
		"[{\"index\":3,\"dev\":\"roce0\",\"mode\":\"standard\","
		"\"ecn\":true,\"counters\":{\"sent_pkts\":18446744073709551615,"
		"\"rcvd_pkts\":0},\"path_list\":[{\"path\":0,\"sport\":49152}]}"
		","
		"{\"dev\":\"x\"}]\n");
}

TEST(Printer, PrettyJson)
{
	EXPECT_EQ(render(true, true), R"([
    {
        "index": 3,
        "dev": "roce0",
        "mode": "standard",
        "ecn": true,
        "counters": {
            "sent_pkts": 18446744073709551615,
            "rcvd_pkts": 0
        },
        "path_list": [
            {
                "path": 0,
                "sport": 49152
            }
        ]
    },
    {
        "dev": "x"
    }
]
)");
}

TEST(Printer, Text)
{
	EXPECT_EQ(render(false, false),
		  "index 3 roce0: mode standard ecn on counters:\n"
		  "    sent_pkts 18446744073709551615\n"
		  "    rcvd_pkts 0\n"
		  "path_list:\n"
		  "    path 0 sport 49152\n"
		  "x:\n");
}

TEST(Printer, EmptyList)
{
	std::ostringstream os;
	Printer p(os, true, false);
	p.begin_list();
	p.end_list();
	EXPECT_EQ(os.str(), "[]\n");
}

TEST(Printer, Escaping)
{
	EXPECT_EQ(json_escape("a\"b\\c\n\x01"), "a\\\"b\\\\c\\n\\u0001");
	std::ostringstream os;
	Printer p(os, true, false);
	p.begin_record();
	p.field("k\"", "v\t");
	p.real("rate", 2.5);
	p.field("neg", -3);
	p.end_record();
	EXPECT_EQ(os.str(), "{\"k\\\"\":\"v\\t\",\"rate\":2.5,\"neg\":-3}\n");
}
