// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * One print path for text and JSON, as iproute2's json_print: a command
 * describes each record once (fields, nested objects) and the Printer emits
 * either "key value" text or JSON.  JSON keys are a stable contract
 * (Documentation/mrxectl.rst).
 */
#ifndef MRXECTL_PRINT_H
#define MRXECTL_PRINT_H

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace mrxectl
{

std::string json_escape(std::string_view s);

class Printer
{
public:
	Printer(std::ostream &out, bool json, bool pretty)
	    : out_(out), json_(json), pretty_(pretty)
	{
	}

	bool json() const { return json_; }

	/* A list of records: JSON "[...]"; nothing in text. */
	void begin_list();
	void end_list();
	/* One record: JSON object; text: one line (nested lines below it). */
	void begin_record();
	void end_record();

	/* Record header: text "VALUE: ", JSON "key": "VALUE". */
	void name(std::string_view key, std::string_view value);
	void field(std::string_view key, std::string_view value);
	void field(std::string_view key, const char *value)
	{
		field(key, std::string_view(value));
	}
	void field(std::string_view key, uint64_t value);
	void field(std::string_view key, int64_t value);
	void field(std::string_view key, uint32_t value)
	{
		field(key, static_cast<uint64_t>(value));
	}
	void field(std::string_view key, int value)
	{
		field(key, static_cast<int64_t>(value));
	}
	/* text "on"/"off", JSON true/false */
	void flag(std::string_view key, bool value);
	/* A floating value with @prec decimals (rates). */
	void real(std::string_view key, double value, int prec = 1);

	/* Nested object: JSON "key": {...}; text: fields on indented lines. */
	void begin_object(std::string_view key);
	void end_object();
	/* Nested array of objects: JSON "key": [{...}]; text: indented lines.
	 */
	void begin_array(std::string_view key);
	void end_array();
	/* Element of an array. */
	void begin_element();
	void end_element();

private:
	struct Level {
		bool array;
		bool first;
	};
	void json_sep();
	void json_key(std::string_view key);
	void newline_indent();
	void text_sep();
	void text_kv(std::string_view key, std::string_view value);

	std::ostream &out_;
	bool json_;
	bool pretty_;
	std::vector<Level> stack_;
	int text_depth_ = 0; /* nesting in text mode */
	bool text_line_start_ = true;
	bool text_after_nested_ = false; /* next top field: new line */
};

} // namespace mrxectl

#endif
