// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "print.h"

#include <cstdio>

namespace mrxectl
{

std::string json_escape(std::string_view s)
{
	std::string r;
	r.reserve(s.size() + 2);
	for (unsigned char c : s) {
		switch (c) {
		case '"':
			r += "\\\"";
			break;
		case '\\':
			r += "\\\\";
			break;
		case '\n':
			r += "\\n";
			break;
		case '\t':
			r += "\\t";
			break;
		case '\r':
			r += "\\r";
			break;
		case '\b':
			r += "\\b";
			break;
		case '\f':
			r += "\\f";
			break;
		default:
			if (c < 0x20) {
				char buf[8];
				std::snprintf(buf, sizeof(buf), "\\u%04x", c);
				r += buf;
			} else {
				r += static_cast<char>(c);
			}
		}
	}
	return r;
}

void Printer::newline_indent()
{
	if (!pretty_)
		return;
	out_ << '\n';
	for (size_t i = 0; i < stack_.size(); i++)
		out_ << "    ";
}

void Printer::json_sep()
{
	if (stack_.empty())
		return;
	if (!stack_.back().first)
		out_ << ',';
	stack_.back().first = false;
	newline_indent();
}

void Printer::json_key(std::string_view key)
{
	json_sep();
	out_ << '"' << json_escape(key) << "\":";
	if (pretty_)
		out_ << ' ';
}

void Printer::text_sep()
{
	if (text_depth_ > 0) {
		out_ << '\n';
		for (int i = 0; i < text_depth_; i++)
			out_ << "    ";
	} else if (text_after_nested_) {
		out_ << '\n'; /* back at the top after a nested block */
		text_after_nested_ = false;
	} else if (!text_line_start_) {
		out_ << ' ';
	}
	text_line_start_ = false;
}

void Printer::text_kv(std::string_view key, std::string_view value)
{
	text_sep();
	out_ << key << ' ' << value;
}

void Printer::begin_list()
{
	if (!json_)
		return;
	out_ << '[';
	stack_.push_back({ true, true });
}

void Printer::end_list()
{
	if (!json_)
		return;
	stack_.pop_back();
	newline_indent();
	out_ << "]\n";
}

void Printer::begin_record()
{
	if (json_) {
		json_sep();
		out_ << '{';
		stack_.push_back({ false, true });
		return;
	}
	text_line_start_ = true;
	text_after_nested_ = false;
	text_depth_ = 0;
}

void Printer::end_record()
{
	if (json_) {
		stack_.pop_back();
		newline_indent();
		out_ << '}';
		if (stack_.empty())
			out_ << '\n';
		return;
	}
	out_ << '\n';
	out_.flush();
}

void Printer::name(std::string_view key, std::string_view value)
{
	if (json_) {
		field(key, value);
		return;
	}
	text_sep();
	out_ << value << ':';
}

void Printer::field(std::string_view key, std::string_view value)
{
	if (json_) {
		json_key(key);
		out_ << '"' << json_escape(value) << '"';
		return;
	}
	text_kv(key, value);
}

void Printer::field(std::string_view key, uint64_t value)
{
	if (json_) {
		json_key(key);
		out_ << value;
		return;
	}
	text_kv(key, std::to_string(value));
}

void Printer::field(std::string_view key, int64_t value)
{
	if (json_) {
		json_key(key);
		out_ << value;
		return;
	}
	text_kv(key, std::to_string(value));
}

void Printer::flag(std::string_view key, bool value)
{
	if (json_) {
		json_key(key);
		out_ << (value ? "true" : "false");
		return;
	}
	text_kv(key, value ? "on" : "off");
}

void Printer::real(std::string_view key, double value, int prec)
{
	char buf[64];
	std::snprintf(buf, sizeof(buf), "%.*f", prec, value);
	if (json_) {
		json_key(key);
		out_ << buf;
		return;
	}
	text_kv(key, buf);
}

void Printer::begin_object(std::string_view key)
{
	if (json_) {
		json_key(key);
		out_ << '{';
		stack_.push_back({ false, true });
		return;
	}
	text_sep();
	out_ << key << ':';
	text_depth_++;
}

void Printer::end_object()
{
	if (json_) {
		stack_.pop_back();
		newline_indent();
		out_ << '}';
		return;
	}
	if (--text_depth_ == 0)
		text_after_nested_ = true;
}

void Printer::begin_array(std::string_view key)
{
	if (json_) {
		json_key(key);
		out_ << '[';
		stack_.push_back({ true, true });
		return;
	}
	text_sep();
	out_ << key << ':';
	text_depth_++;
}

void Printer::end_array()
{
	if (json_) {
		stack_.pop_back();
		newline_indent();
		out_ << ']';
		return;
	}
	if (--text_depth_ == 0)
		text_after_nested_ = true;
}

void Printer::begin_element()
{
	if (json_) {
		json_sep();
		out_ << '{';
		stack_.push_back({ false, true });
		return;
	}
	/* text: the element's fields share one indented line */
	text_sep();
	text_line_start_ = true;
	text_depth_ = -text_depth_; /* inline until end_element */
}

void Printer::end_element()
{
	if (json_) {
		stack_.pop_back();
		newline_indent();
		out_ << '}';
		return;
	}
	text_depth_ = -text_depth_;
}

} // namespace mrxectl
