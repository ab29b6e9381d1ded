// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// mrxe-verify: RDMA data-integrity test.
//
// A server and a client exchange QP information over a plain TCP connection
// (no librdmacm), connect an RC (or UC) QP and then, for every message size
// and iteration, move patterned buffers with RDMA WRITE, WRITE with
// immediate, RDMA READ, SEND and SEND with immediate.  The side where the
// data arrives checks every byte of the message and a guard area on both
// sides of it, and reports the first bad offset with the expected and actual
// byte.  The client drives the run and prints one TAP line per case; both
// processes exit non-zero on any mismatch, error completion or timeout.
//
// Control protocol (one text line per message, "VERB key=value ..."):
//   C->S HELLO   run parameters (QP type, largest size, SGEs, inline)
//   S->C INFO    server QP, GID, buffers, active MTU, max message size
//   C->S INFO    client QP, GID, buffers, chosen path MTU
//   S->C RTS     server QP is ready
//   per case:
//   C->S CASE    op, initiator, size, iteration, seed, offsets
//   S->C READY   server prepared (and, if it initiates, completed the op)
//   C->S DONE    status of the client's part
//   S->C RESULT  the server's verdict on data that arrived at the server
//   C->S BYE / S->C BYE  totals

#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pattern.h"

namespace mv = mrxe_verify;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kProtoVersion = 1;
constexpr uint64_t kGuard = 4096;	// canary bytes checked on each side
constexpr uint64_t kSlack = 8192;	// buffer space before/after the data
constexpr uint64_t kRecvExtra = 64;	// recv WQE longer than the message
constexpr uint32_t kQueueDepth = 64;

bool g_verbose;

[[gnu::format(printf, 1, 2)]] void logv(const char *fmt, ...)
{
	if (!g_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	std::fputs("# ", stdout);
	std::vprintf(fmt, ap);
	std::fputc('\n', stdout);
	std::fflush(stdout);
	va_end(ap);
}

[[gnu::format(printf, 1, 2)]] void errorf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	std::fputs("mrxe-verify: ", stderr);
	std::vfprintf(stderr, fmt, ap);
	std::fputc('\n', stderr);
	va_end(ap);
}

// ---------------------------------------------------------------- options

enum class Op : uint32_t { Write = 1, WriteImm, Read, Send, SendImm };

struct OpInfo {
	Op op;
	const char *name;
	bool needs_recv;	// consumes a receive WQE on the target
	bool rc_only;
};

constexpr OpInfo kOps[] = {
	{ Op::Write, "write", false, false },
	{ Op::WriteImm, "write_imm", true, false },
	{ Op::Read, "read", false, true },
	{ Op::Send, "send", true, false },
	{ Op::SendImm, "send_imm", true, false },
};

const OpInfo *find_op(std::string_view name)
{
	for (const auto &o : kOps)
		if (name == o.name)
			return &o;
	return nullptr;
}

const OpInfo &op_info(Op op)
{
	for (const auto &o : kOps)
		if (o.op == op)
			return o;
	std::abort();
}

struct Options {
	bool server = false;
	bool client = false;
	std::string bind_addr;
	std::string connect_addr;
	uint16_t port = 0;
	std::string dev;
	int gid_index = -1;	// -1: pick the first RoCEv2 IPv4 GID
	int ib_port = 1;
	ibv_qp_type qpt = IBV_QPT_RC;
	int mtu = 0;		// 0: min of both ports' active MTU
	std::string sizes = "0,1,mtu-1,mtu,mtu+1,1M,64M";
	std::vector<const OpInfo *> ops;
	bool reverse = false;
	int iters = 2;
	int nsge = 1;
	bool use_inline = false;
	bool use_srq = false;	// this side's receives come from an SRQ
	int timeout = 120;	// seconds per operation
	int connect_timeout = 30;
	bool busy_poll = false;
	unsigned inject_fault = 0;	// case number whose data gets corrupted
	unsigned recv_late_ms = 0;	// target posts its receive this late
	std::string mode;	// "": ibv_create_qp; else mrxedv_create_qp
	uint32_t paths = 0;	// --paths (this side only), 0: device default
	uint8_t ack_timeout = 14;	// --ack-timeout (this side only)
	uint8_t retry_cnt = 7;		// --retry-cnt (this side only)
	uint8_t sl = 0;			// --sl (this side's AV)
	int priority = -1;		// --priority (this side), -1: none
};

void usage(FILE *f)
{
	std::fprintf(f,
"usage: mrxe-verify --server --bind ADDR --port PORT --dev DEV [options]\n"
"       mrxe-verify --client --connect ADDR --port PORT --dev DEV [options]\n"
"\n"
"RDMA data-integrity test: RC/UC WRITE, WRITE_IMM, READ, SEND, SEND_IMM of\n"
"patterned buffers; the receiving side verifies every byte.  QP information\n"
"is exchanged over TCP.  The client drives the run; most options below are\n"
"client options and are sent to the server.\n"
"\n"
"  --server | --client     role\n"
"  --bind ADDR             local address to bind (server: required)\n"
"  --connect ADDR          server address (client: required)\n"
"  --port PORT             TCP port of the out-of-band exchange\n"
"  --dev DEV               RDMA device name (e.g. mrxe0, rxe0)\n"
"  --gid-index N           GID index (default: first RoCEv2 IPv4 GID)\n"
"  --ib-port N             device port (default 1)\n"
"  --mode MODE             standard, metaroce or auto: create the QP with\n"
"                          mrxedv_create_qp (mrxe provider) in that transport\n"
"                          mode and print the mode it resolved to (also sent\n"
"                          to the server)\n"
"  --ack-timeout N         RC local ACK timeout of this side's QP, 4.096 us\n"
"                          * 2^N, 1..31 (default 14: 67 ms; not sent to\n"
"                          the peer)\n"
"  --retry-cnt N           RC transport retry count of this side's QP,\n"
"                          0..7 (default 7; not sent to the peer)\n"
"  --sl N                  service level of this side's address vector,\n"
"                          0..15 (mrxe: QP priority, 4 and up high)\n"
"  --priority N            this side's QP priority 0..7 (mrxedv_create_qp,\n"
"                          instead of the SL's; not sent to the peer)\n"
"  --paths N               with --mode: this side's QP sprays over N paths\n"
"                          (UDP source ports), 1..16; each side chooses its\n"
"                          own (not sent to the peer)\n"
"  --qp rc|uc              QP type (default rc; uc skips read)\n"
"  --mtu BYTES             path MTU 256..4096 (default: smaller active MTU)\n"
"  --sizes LIST            comma list; K/M/G suffixes; mtu, mtu-N, mtu+N\n"
"                          (default 0,1,mtu-1,mtu,mtu+1,1M,64M)\n"
"  --ops LIST              of write,write_imm,read,send,send_imm (default all)\n"
"  --reverse               also run every op with the server initiating\n"
"  --iters N               iterations per size (default 2)\n"
"  --sge N                 split every local buffer into N SGEs (default 1)\n"
"  --inline                post inline when the size allows\n"
"  --srq                   this side's QP takes its receives from an SRQ\n"
"  --timeout SECS          per-operation completion timeout (default 120)\n"
"  --connect-timeout SECS  client: retry connecting this long (default 30)\n"
"  --busy-poll             poll the CQ instead of waiting for CQ events\n"
"  --inject-fault N        test the tester: the target flips one byte of\n"
"                          case N after it arrived (that case must fail)\n"
"  --recv-late MS          this side, as target, posts the receive of a\n"
"                          SEND/WRITE_IMM MS ms after the initiator may\n"
"                          start (RNR NAKs, IBA 9.7.5.2.8; 1..10000)\n"
"  -v, --verbose           log each step\n"
"  -h, --help              this text\n"
"\n"
"Exit status: 0 every case passed, 1 a case failed or an error occurred,\n"
"2 bad usage.\n");
}

template <typename T>
bool parse_num(std::string_view s, T &out)
{
	if (s.empty())
		return false;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
	return ec == std::errc() && p == s.data() + s.size();
}

// One --sizes element, e.g. "64M", "mtu+1".  Returns false on bad syntax.
bool parse_size(std::string_view s, uint64_t mtu, uint64_t &out)
{
	if (s.substr(0, 3) == "mtu") {
		std::string_view rest = s.substr(3);
		uint64_t d = 0;

		if (rest.empty()) {
			out = mtu;
			return true;
		}
		if (rest.size() < 2 || (rest[0] != '+' && rest[0] != '-') ||
		    !parse_num(rest.substr(1), d))
			return false;
		if (rest[0] == '-' && d > mtu)
			return false;
		out = rest[0] == '+' ? mtu + d : mtu - d;
		return true;
	}
	uint64_t mult = 1;
	if (!s.empty()) {
		switch (s.back()) {
		case 'k': case 'K': mult = 1ull << 10; break;
		case 'm': case 'M': mult = 1ull << 20; break;
		case 'g': case 'G': mult = 1ull << 30; break;
		default: break;
		}
		if (mult != 1)
			s.remove_suffix(1);
	}
	uint64_t v;
	if (!parse_num(s, v) || v > (1ull << 34) / mult)
		return false;
	out = v * mult;
	return true;
}

std::vector<std::string_view> split(std::string_view s, char sep)
{
	std::vector<std::string_view> out;
	size_t start = 0;

	while (true) {
		size_t p = s.find(sep, start);
		out.push_back(s.substr(start, p == s.npos ? s.npos : p - start));
		if (p == s.npos)
			break;
		start = p + 1;
	}
	return out;
}

bool parse_sizes(const std::string &list, uint64_t mtu,
		 std::vector<uint64_t> &out)
{
	out.clear();
	for (auto tok : split(list, ',')) {
		uint64_t v;
		if (!parse_size(tok, mtu, v))
			return false;
		out.push_back(v);
	}
	return !out.empty();
}

bool valid_mtu(int m)
{
	return m == 256 || m == 512 || m == 1024 || m == 2048 || m == 4096;
}

ibv_mtu to_ibv_mtu(int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	default: return IBV_MTU_4096;
	}
}

int mtu_bytes(ibv_mtu m)
{
	switch (m) {
	case IBV_MTU_256: return 256;
	case IBV_MTU_512: return 512;
	case IBV_MTU_1024: return 1024;
	case IBV_MTU_2048: return 2048;
	case IBV_MTU_4096: return 4096;
	}
	return 0;
}

// Returns 0 on success, 2 on bad usage (message printed), -1 for --help.
int parse_args(int argc, char **argv, Options &o)
{
	enum {
		O_SERVER = 256, O_CLIENT, O_BIND, O_CONNECT, O_PORT, O_DEV,
		O_GID, O_IBPORT, O_QP, O_MTU, O_SIZES, O_OPS, O_REVERSE,
		O_ITERS, O_SGE, O_INLINE, O_SRQ, O_TIMEOUT, O_CTIMEOUT, O_BUSY,
		O_FAULT, O_RLATE, O_MODE, O_PATHS, O_ACKTO, O_SL, O_PRIO,
		O_RETRY,
	};
	static const struct option lopts[] = {
		{ "server", no_argument, nullptr, O_SERVER },
		{ "client", no_argument, nullptr, O_CLIENT },
		{ "bind", required_argument, nullptr, O_BIND },
		{ "connect", required_argument, nullptr, O_CONNECT },
		{ "port", required_argument, nullptr, O_PORT },
		{ "dev", required_argument, nullptr, O_DEV },
		{ "gid-index", required_argument, nullptr, O_GID },
		{ "ib-port", required_argument, nullptr, O_IBPORT },
		{ "qp", required_argument, nullptr, O_QP },
		{ "mtu", required_argument, nullptr, O_MTU },
		{ "sizes", required_argument, nullptr, O_SIZES },
		{ "ops", required_argument, nullptr, O_OPS },
		{ "reverse", no_argument, nullptr, O_REVERSE },
		{ "iters", required_argument, nullptr, O_ITERS },
		{ "sge", required_argument, nullptr, O_SGE },
		{ "inline", no_argument, nullptr, O_INLINE },
		{ "srq", no_argument, nullptr, O_SRQ },
		{ "timeout", required_argument, nullptr, O_TIMEOUT },
		{ "connect-timeout", required_argument, nullptr, O_CTIMEOUT },
		{ "busy-poll", no_argument, nullptr, O_BUSY },
		{ "inject-fault", required_argument, nullptr, O_FAULT },
		{ "recv-late", required_argument, nullptr, O_RLATE },
		{ "mode", required_argument, nullptr, O_MODE },
		{ "paths", required_argument, nullptr, O_PATHS },
		{ "ack-timeout", required_argument, nullptr, O_ACKTO },
		{ "retry-cnt", required_argument, nullptr, O_RETRY },
		{ "sl", required_argument, nullptr, O_SL },
		{ "priority", required_argument, nullptr, O_PRIO },
		{ "verbose", no_argument, nullptr, 'v' },
		{ "help", no_argument, nullptr, 'h' },
		{ nullptr, 0, nullptr, 0 },
	};
	std::string ops = "write,write_imm,read,send,send_imm";
	bool ops_given = false;
	int c;

	auto bad = [](const char *what, const char *val) {
		errorf("invalid %s '%s' (see --help)", what, val);
		return 2;
	};

	opterr = 0;
	while ((c = getopt_long(argc, argv, "vh", lopts, nullptr)) != -1) {
		switch (c) {
		case O_SERVER: o.server = true; break;
		case O_CLIENT: o.client = true; break;
		case O_BIND: o.bind_addr = optarg; break;
		case O_CONNECT: o.connect_addr = optarg; break;
		case O_PORT: {
			unsigned p;
			if (!parse_num(std::string_view(optarg), p) || p < 1 || p > 65535)
				return bad("--port", optarg);
			o.port = (uint16_t)p;
			break;
		}
		case O_DEV: o.dev = optarg; break;
		case O_GID:
			if (!parse_num(std::string_view(optarg), o.gid_index) ||
			    o.gid_index < 0 || o.gid_index > 65535)
				return bad("--gid-index", optarg);
			break;
		case O_IBPORT:
			if (!parse_num(std::string_view(optarg), o.ib_port) ||
			    o.ib_port < 1 || o.ib_port > 255)
				return bad("--ib-port", optarg);
			break;
		case O_QP:
			if (!std::strcmp(optarg, "rc"))
				o.qpt = IBV_QPT_RC;
			else if (!std::strcmp(optarg, "uc"))
				o.qpt = IBV_QPT_UC;
			else
				return bad("--qp", optarg);
			break;
		case O_MTU:
			if (!parse_num(std::string_view(optarg), o.mtu) || !valid_mtu(o.mtu))
				return bad("--mtu (256, 512, 1024, 2048 or 4096)", optarg);
			break;
		case O_SIZES: {
			std::vector<uint64_t> tmp;
			o.sizes = optarg;
			if (!parse_sizes(o.sizes, 4096, tmp))
				return bad("--sizes", optarg);
			break;
		}
		case O_OPS: ops = optarg; ops_given = true; break;
		case O_REVERSE: o.reverse = true; break;
		case O_ITERS:
			if (!parse_num(std::string_view(optarg), o.iters) ||
			    o.iters < 1 || o.iters > 1000000)
				return bad("--iters", optarg);
			break;
		case O_SGE:
			if (!parse_num(std::string_view(optarg), o.nsge) ||
			    o.nsge < 1 || o.nsge > 64)
				return bad("--sge", optarg);
			break;
		case O_INLINE: o.use_inline = true; break;
		case O_SRQ: o.use_srq = true; break;
		case O_TIMEOUT:
			if (!parse_num(std::string_view(optarg), o.timeout) ||
			    o.timeout < 1 || o.timeout > 86400)
				return bad("--timeout", optarg);
			break;
		case O_CTIMEOUT:
			if (!parse_num(std::string_view(optarg), o.connect_timeout) ||
			    o.connect_timeout < 0 || o.connect_timeout > 86400)
				return bad("--connect-timeout", optarg);
			break;
		case O_BUSY: o.busy_poll = true; break;
		case O_FAULT:
			if (!parse_num(std::string_view(optarg), o.inject_fault) ||
			    !o.inject_fault)
				return bad("--inject-fault", optarg);
			break;
		case O_RLATE:
			if (!parse_num(std::string_view(optarg), o.recv_late_ms) ||
			    !o.recv_late_ms || o.recv_late_ms > 10000)
				return bad("--recv-late", optarg);
			break;
		case O_MODE:
			if (std::strcmp(optarg, "standard") &&
			    std::strcmp(optarg, "metaroce") &&
			    std::strcmp(optarg, "auto"))
				return bad("--mode (standard, metaroce or auto)", optarg);
			o.mode = optarg;
			break;
		case O_PATHS:
			if (!parse_num(std::string_view(optarg), o.paths) ||
			    !o.paths)
				return bad("--paths", optarg);
			break;
		case O_SL:
			if (!parse_num(std::string_view(optarg), o.sl) || o.sl > 15)
				return bad("--sl", optarg);
			break;
		case O_PRIO: {
			uint8_t p;
			if (!parse_num(std::string_view(optarg), p) || p > 7)
				return bad("--priority (0..7)", optarg);
			o.priority = p;
			break;
		}
		case O_ACKTO:
			if (!parse_num(std::string_view(optarg), o.ack_timeout) ||
			    o.ack_timeout < 1 || o.ack_timeout > 31)
				return bad("--ack-timeout", optarg);
			break;
		case O_RETRY:
			if (!parse_num(std::string_view(optarg), o.retry_cnt) ||
			    o.retry_cnt > 7)
				return bad("--retry-cnt", optarg);
			break;
		case 'v': g_verbose = true; break;
		case 'h': usage(stdout); return -1;
		default:
			errorf("unknown or incomplete option '%s' (see --help)",
			       argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		errorf("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	if (o.server == o.client) {
		errorf("exactly one of --server and --client is required");
		return 2;
	}
	if (!o.port) {
		errorf("--port is required");
		return 2;
	}
	if (o.dev.empty()) {
		errorf("--dev is required");
		return 2;
	}
	if (o.server && o.bind_addr.empty()) {
		errorf("--server needs --bind ADDR");
		return 2;
	}
	if (o.client && o.connect_addr.empty()) {
		errorf("--client needs --connect ADDR");
		return 2;
	}
	for (auto tok : split(ops, ',')) {
		const OpInfo *oi = find_op(tok);
		if (!oi)
			return bad("--ops element", std::string(tok).c_str());
		if (std::find(o.ops.begin(), o.ops.end(), oi) == o.ops.end())
			o.ops.push_back(oi);
	}
	if (o.qpt == IBV_QPT_UC) {
		std::erase_if(o.ops, [](const OpInfo *oi) { return oi->rc_only; });
		if (o.ops.empty() && ops_given) {
			errorf("--qp uc supports no op in '%s' (read is RC only)",
			       ops.c_str());
			return 2;
		}
	}
	return 0;
}

// ------------------------------------------------------- out-of-band TCP

class Fd {
public:
	Fd() = default;
	explicit Fd(int fd) : fd_(fd) {}
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
	Fd(Fd &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
	Fd &operator=(Fd &&o) noexcept
	{
		if (this != &o) {
			reset();
			fd_ = o.fd_;
			o.fd_ = -1;
		}
		return *this;
	}
	~Fd() { reset(); }
	void reset()
	{
		if (fd_ >= 0)
			::close(fd_);
		fd_ = -1;
	}
	int get() const { return fd_; }

private:
	int fd_ = -1;
};

using Msg = std::map<std::string, std::string, std::less<>>;

class Conn {
public:
	explicit Conn(Fd fd) : fd_(std::move(fd)) {}

	// While waiting for the peer, also watch @fd (the device's async
	// event fd): when it wakes up, @gone(revents) handles the event and
	// says whether the device went away (then the wait ends).  A peer
	// behind a deleted veth never closes the connection: without this a
	// survivor waited for the message timeout.
	void watch(int fd, std::function<bool(short)> gone)
	{
		watch_fd_ = fd;
		gone_ = std::move(gone);
	}

	bool send_line(const std::string &line)
	{
		std::string l = line + "\n";
		size_t off = 0;

		logv("-> %s", line.c_str());
		while (off < l.size()) {
			ssize_t n = ::send(fd_.get(), l.data() + off, l.size() - off,
					   MSG_NOSIGNAL);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				errorf("control connection: send: %s",
				       std::strerror(errno));
				return false;
			}
			off += (size_t)n;
		}
		return true;
	}

	// Reads one line; nullopt on EOF, error or timeout (message printed).
	std::optional<std::string> recv_line(int timeout_s)
	{
		auto deadline = Clock::now() + std::chrono::seconds(timeout_s);

		while (true) {
			size_t nl = buf_.find('\n');
			if (nl != std::string::npos) {
				std::string line = buf_.substr(0, nl);
				buf_.erase(0, nl + 1);
				logv("<- %s", line.c_str());
				return line;
			}
			if (buf_.size() > 65536) {
				errorf("control connection: line too long");
				return std::nullopt;
			}
			auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
				deadline - Clock::now()).count();
			if (left <= 0) {
				errorf("control connection: no message from peer within %d s",
				       timeout_s);
				return std::nullopt;
			}
			struct pollfd pfd[2] = { { fd_.get(), POLLIN, 0 },
						 { watch_fd_, POLLIN, 0 } };
			int r = ::poll(pfd, watch_fd_ >= 0 ? 2 : 1,
				       (int)std::min<long long>(left, 1000));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				errorf("control connection: poll: %s", std::strerror(errno));
				return std::nullopt;
			}
			if (watch_fd_ >= 0 && pfd[1].revents && gone_(pfd[1].revents))
				return std::nullopt;
			if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char tmp[4096];
			ssize_t n = ::recv(fd_.get(), tmp, sizeof(tmp), 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0) {
				errorf("control connection: peer closed the connection");
				return std::nullopt;
			}
			if (n < 0) {
				errorf("control connection: recv: %s", std::strerror(errno));
				return std::nullopt;
			}
			buf_.append(tmp, (size_t)n);
		}
	}

	// Receives a message whose verb must be `verb`; parses key=value pairs.
	std::optional<Msg> expect(const char *verb, int timeout_s)
	{
		auto line = recv_line(timeout_s);
		if (!line)
			return std::nullopt;
		auto toks = split(*line, ' ');
		if (toks.empty() || toks[0] != verb) {
			errorf("control protocol: expected %s, got '%s'", verb,
			       line->c_str());
			return std::nullopt;
		}
		Msg m;
		for (size_t i = 1; i < toks.size(); i++) {
			if (toks[i].empty())
				continue;
			size_t eq = toks[i].find('=');
			if (eq == std::string_view::npos) {
				errorf("control protocol: bad field '%s'",
				       std::string(toks[i]).c_str());
				return std::nullopt;
			}
			m.emplace(std::string(toks[i].substr(0, eq)),
				  std::string(toks[i].substr(eq + 1)));
		}
		return m;
	}

private:
	Fd fd_;
	int watch_fd_ = -1;
	std::function<bool(short)> gone_;
	std::string buf_;
};

bool resolve(const std::string &host, uint16_t port, sockaddr_storage &ss,
	     socklen_t &len)
{
	struct addrinfo hints = {}, *res = nullptr;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	std::string ps = std::to_string(port);
	int r = getaddrinfo(host.c_str(), ps.c_str(), &hints, &res);
	if (r) {
		errorf("cannot resolve '%s': %s", host.c_str(), gai_strerror(r));
		return false;
	}
	std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
	len = res->ai_addrlen;
	freeaddrinfo(res);
	return true;
}

std::optional<Conn> server_accept(const Options &o)
{
	sockaddr_storage ss;
	socklen_t len;
	if (!resolve(o.bind_addr, o.port, ss, len))
		return std::nullopt;
	Fd ls(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (ls.get() < 0) {
		errorf("socket: %s", std::strerror(errno));
		return std::nullopt;
	}
	int one = 1;
	setsockopt(ls.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (::bind(ls.get(), (sockaddr *)&ss, len) < 0) {
		errorf("bind %s:%u: %s", o.bind_addr.c_str(), o.port,
		       std::strerror(errno));
		return std::nullopt;
	}
	if (::listen(ls.get(), 1) < 0) {
		errorf("listen: %s", std::strerror(errno));
		return std::nullopt;
	}
	std::printf("# server: listening on %s port %u\n", o.bind_addr.c_str(), o.port);
	std::fflush(stdout);
	int wait_ms = (o.connect_timeout + o.timeout) * 1000;
	struct pollfd pfd = { ls.get(), POLLIN, 0 };
	int r;
	do {
		r = ::poll(&pfd, 1, wait_ms);
	} while (r < 0 && errno == EINTR);
	if (r <= 0) {
		errorf("no client connected within %d s", wait_ms / 1000);
		return std::nullopt;
	}
	Fd cs(::accept4(ls.get(), nullptr, nullptr, SOCK_CLOEXEC));
	if (cs.get() < 0) {
		errorf("accept: %s", std::strerror(errno));
		return std::nullopt;
	}
	setsockopt(cs.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return Conn(std::move(cs));
}

std::optional<Conn> client_connect(const Options &o)
{
	sockaddr_storage ss;
	socklen_t len;
	if (!resolve(o.connect_addr, o.port, ss, len))
		return std::nullopt;
	auto deadline = Clock::now() + std::chrono::seconds(o.connect_timeout);
	int last_err = 0;

	while (true) {
		Fd s(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
		if (s.get() < 0) {
			errorf("socket: %s", std::strerror(errno));
			return std::nullopt;
		}
		if (::connect(s.get(), (sockaddr *)&ss, len) == 0) {
			int one = 1;
			setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return Conn(std::move(s));
		}
		last_err = errno;
		if (Clock::now() >= deadline)
			break;
		::usleep(200 * 1000);
	}
	errorf("connect %s:%u: %s (gave up after %d s)", o.connect_addr.c_str(),
	       o.port, std::strerror(last_err), o.connect_timeout);
	return std::nullopt;
}

// ------------------------------------------------------------ verbs RAII

template <auto Fn>
struct Deleter {
	template <typename T>
	void operator()(T *p) const
	{
		if (p && Fn(p))
			errorf("destroying a verbs object failed");
	}
};

using ContextPtr = std::unique_ptr<ibv_context, Deleter<ibv_close_device>>;
using PdPtr = std::unique_ptr<ibv_pd, Deleter<ibv_dealloc_pd>>;
using MrPtr = std::unique_ptr<ibv_mr, Deleter<ibv_dereg_mr>>;
using ChannelPtr = std::unique_ptr<ibv_comp_channel,
				   Deleter<ibv_destroy_comp_channel>>;
using CqPtr = std::unique_ptr<ibv_cq, Deleter<ibv_destroy_cq>>;
using QpPtr = std::unique_ptr<ibv_qp, Deleter<ibv_destroy_qp>>;
using SrqPtr = std::unique_ptr<ibv_srq, Deleter<ibv_destroy_srq>>;

class Buffer {
public:
	explicit Buffer(size_t len) : len_(len)
	{
		void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		p_ = p == MAP_FAILED ? nullptr : (uint8_t *)p;
	}
	Buffer(const Buffer &) = delete;
	Buffer &operator=(const Buffer &) = delete;
	~Buffer()
	{
		if (p_)
			::munmap(p_, len_);
	}
	uint8_t *data() const { return p_; }
	size_t size() const { return len_; }

private:
	uint8_t *p_ = nullptr;
	size_t len_;
};

std::string gid_str(const ibv_gid &g)
{
	char s[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, g.raw, s, sizeof(s));
	return s;
}

bool parse_gid(const std::string &s, ibv_gid &g)
{
	return inet_pton(AF_INET6, s.c_str(), g.raw) == 1;
}

// GID type from sysfs, for kernels/providers where ibv_query_gid_ex fails.
std::string sysfs_gid_type(const std::string &dev, int port, int idx)
{
	std::ifstream f("/sys/class/infiniband/" + dev + "/ports/" +
			std::to_string(port) + "/gid_attrs/types/" +
			std::to_string(idx));
	std::string t;
	std::getline(f, t);
	return t;
}

struct Completion {
	ibv_wc wc;
};

struct Local {
	ContextPtr ctx;
	PdPtr pd;
	ChannelPtr chan;
	CqPtr cq;
	std::unique_ptr<Buffer> src, dst;
	MrPtr src_mr, dst_mr;
	SrqPtr srq;	// before qp: the QP is destroyed first
	QpPtr qp;

	ibv_device_attr dev_attr = {};
	ibv_port_attr port_attr = {};
	ibv_gid gid = {};
	int gid_index = -1;
	uint32_t psn = 0;
	uint32_t max_inline = 0;
	uint32_t max_sge = 1;
	unsigned unacked_events = 0;
	std::map<uint64_t, ibv_wc> stash;	// completions not yet claimed

	~Local()
	{
		if (cq && unacked_events)
			ibv_ack_cq_events(cq.get(), unacked_events);
		// members are destroyed in reverse order: qp, mrs, buffers,
		// cq, channel, pd, context.
	}
};

bool open_device(const Options &o, Local &l)
{
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	if (!list) {
		errorf("ibv_get_device_list: %s", std::strerror(errno));
		return false;
	}
	ibv_device *found = nullptr;
	std::string names;
	for (int i = 0; i < n; i++) {
		names += std::string(names.empty() ? "" : " ") +
			 ibv_get_device_name(list[i]);
		if (o.dev == ibv_get_device_name(list[i]))
			found = list[i];
	}
	if (found)
		l.ctx.reset(ibv_open_device(found));
	int err = errno;
	ibv_free_device_list(list);
	if (!found) {
		errorf("device '%s' not found (have: %s)", o.dev.c_str(),
		       names.empty() ? "none" : names.c_str());
		return false;
	}
	if (!l.ctx) {
		errorf("ibv_open_device %s: %s", o.dev.c_str(), std::strerror(err));
		return false;
	}
	if (ibv_query_device(l.ctx.get(), &l.dev_attr)) {
		errorf("ibv_query_device: %s", std::strerror(errno));
		return false;
	}
	if (o.ib_port > l.dev_attr.phys_port_cnt) {
		errorf("%s has %u port(s), --ib-port %d", o.dev.c_str(),
		       l.dev_attr.phys_port_cnt, o.ib_port);
		return false;
	}
	if (ibv_query_port(l.ctx.get(), o.ib_port, &l.port_attr)) {
		errorf("ibv_query_port: %s", std::strerror(errno));
		return false;
	}
	if (l.port_attr.state != IBV_PORT_ACTIVE)
		std::printf("# warning: %s port %d state is %s\n", o.dev.c_str(),
			    o.ib_port, ibv_port_state_str(l.port_attr.state));

	if (o.gid_index >= 0) {
		if (o.gid_index >= l.port_attr.gid_tbl_len) {
			errorf("--gid-index %d beyond the GID table (%d entries)",
			       o.gid_index, l.port_attr.gid_tbl_len);
			return false;
		}
		l.gid_index = o.gid_index;
	} else {
		// First RoCEv2 GID with an IPv4-mapped address, else first RoCEv2.
		int any_v2 = -1;
		for (int i = 0; i < l.port_attr.gid_tbl_len && i < 1024; i++) {
			ibv_gid g;
			if (ibv_query_gid(l.ctx.get(), o.ib_port, i, &g))
				continue;
			static const uint8_t zero[16] = {};
			if (!std::memcmp(g.raw, zero, 16))
				continue;
			bool v2;
			ibv_gid_entry e;
			if (!ibv_query_gid_ex(l.ctx.get(), o.ib_port, i, &e, 0))
				v2 = e.gid_type == IBV_GID_TYPE_ROCE_V2;
			else
				v2 = sysfs_gid_type(o.dev, o.ib_port, i) == "RoCE v2";
			if (!v2)
				continue;
			static const uint8_t v4pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
							   0, 0, 0xff, 0xff };
			if (!std::memcmp(g.raw, v4pfx, 12)) {
				l.gid_index = i;
				break;
			}
			if (any_v2 < 0)
				any_v2 = i;
		}
		if (l.gid_index < 0)
			l.gid_index = any_v2;
		if (l.gid_index < 0) {
			errorf("%s port %d has no RoCEv2 GID: give --gid-index",
			       o.dev.c_str(), o.ib_port);
			return false;
		}
	}
	if (ibv_query_gid(l.ctx.get(), o.ib_port, l.gid_index, &l.gid)) {
		errorf("ibv_query_gid %d: %s", l.gid_index, std::strerror(errno));
		return false;
	}
	return true;
}

// mrxedv (userspace-provider/mrxedv.h), looked up in the provider that
// libibverbs loaded, so the tool still runs where there is no mrxe.
struct MrxedvQpInitAttr {
	uint64_t comp_mask;
	uint32_t transport_mode, num_paths, flags, priority;
};
struct MrxedvQpMode {
	uint32_t transport_mode, num_paths, flags, reserved;
};
using mrxedv_create_qp_fn = ibv_qp *(*)(ibv_context *, ibv_qp_init_attr_ex *,
					MrxedvQpInitAttr *);
using mrxedv_query_qp_mode_fn = int (*)(ibv_qp *, MrxedvQpMode *);

void *mrxedv_sym(const char *name)
{
	std::vector<std::string> libs;
	if (const char *d = std::getenv("RDMAV_DRIVERS")) {
		std::string s(d);
		size_t st = 0;
		while (st <= s.size()) {
			size_t e = s.find(':', st);
			std::string one = s.substr(st, e == s.npos ? s.npos : e - st);
			if (!one.empty())
				libs.push_back(one + "-rdmav34.so");
			if (e == s.npos)
				break;
			st = e + 1;
		}
	}
	libs.push_back("libmrxe-rdmav34.so");
	for (const auto &lib : libs) {
		void *h = dlopen(lib.c_str(), RTLD_NOW | RTLD_NOLOAD);
		if (!h)
			h = dlopen(lib.c_str(), RTLD_NOW);
		if (h) {
			if (void *f = dlsym(h, name))
				return f;
		}
	}
	return nullptr;
}

const char *mode_name(uint32_t m)
{
	switch (m) {
	case 1: return "standard";
	case 2: return "metaroce";
	case 3: return "auto";
	default: return "default";
	}
}

mrxedv_query_qp_mode_fn g_query_mode;

// --mode: the QP's mode after the run (an `auto` QP may have upgraded).
void print_final_mode(const Options &o, ibv_qp *qp)
{
	MrxedvQpMode m = {};

	if (o.mode.empty() || !g_query_mode || !qp || g_query_mode(qp, &m))
		return;
	std::printf("# mode: after the run %s\n", mode_name(m.transport_mode));
	std::fflush(stdout);
}

ibv_qp *create_qp_mode(const Options &o, Local &l, ibv_qp_init_attr &ia)
{
	auto create = (mrxedv_create_qp_fn)mrxedv_sym("mrxedv_create_qp");
	auto query = (mrxedv_query_qp_mode_fn)mrxedv_sym("mrxedv_query_qp_mode");

	g_query_mode = query;
	if (!create || !query) {
		errorf("--mode %s: mrxedv_create_qp not found (mrxe provider): %s",
		       o.mode.c_str(), dlerror());
		errno = EOPNOTSUPP;
		return nullptr;
	}
	ibv_qp_init_attr_ex ax = {};
	ax.send_cq = ia.send_cq;
	ax.recv_cq = ia.recv_cq;
	ax.qp_type = ia.qp_type;
	ax.sq_sig_all = ia.sq_sig_all;
	ax.srq = ia.srq;
	ax.cap = ia.cap;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	ax.pd = l.pd.get();
	MrxedvQpInitAttr dv = {};
	if (!o.mode.empty()) {
		dv.comp_mask = 1;	// MRXEDV_QP_INIT_ATTR_TRANSPORT
		dv.transport_mode = o.mode == "standard" ? 1 :
				    o.mode == "metaroce" ? 2 : 3;
	}
	if (o.priority >= 0) {
		dv.comp_mask |= 8;	// MRXEDV_QP_INIT_ATTR_PRIORITY
		dv.priority = o.priority;
	}
	if (o.paths) {
		dv.comp_mask |= 2;	// MRXEDV_QP_INIT_ATTR_NUM_PATHS
		dv.num_paths = o.paths;
	}
	ibv_qp *qp = create(l.ctx.get(), &ax, &dv);
	if (!qp)
		return nullptr;
	ia.cap = ax.cap;
	MrxedvQpMode m = {};
	int err = query(qp, &m);
	std::printf("# mode: requested %s, resolved %s%s, paths %u, qpn %u\n",
		    o.mode.empty() ? "default" : o.mode.c_str(),
		    err ? "?" : mode_name(m.transport_mode),
		    err ? " (query failed)" : "", err ? 0 : m.num_paths,
		    qp->qp_num);
	if (o.priority >= 0)
		std::printf("# priority: %d, qpn %u\n", o.priority, qp->qp_num);
	std::fflush(stdout);
	return qp;
}

bool create_resources(const Options &o, Local &l, uint64_t max_size)
{
	l.pd.reset(ibv_alloc_pd(l.ctx.get()));
	if (!l.pd) {
		errorf("ibv_alloc_pd: %s", std::strerror(errno));
		return false;
	}
	if (!o.busy_poll) {
		l.chan.reset(ibv_create_comp_channel(l.ctx.get()));
		if (!l.chan) {
			errorf("ibv_create_comp_channel: %s", std::strerror(errno));
			return false;
		}
	}
	int cqe = std::min<int>(4 * kQueueDepth, l.dev_attr.max_cqe);
	l.cq.reset(ibv_create_cq(l.ctx.get(), cqe, nullptr, l.chan.get(), 0));
	if (!l.cq) {
		errorf("ibv_create_cq(%d): %s", cqe, std::strerror(errno));
		return false;
	}

	size_t blen = max_size + 2 * kSlack;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;
	l.src = std::make_unique<Buffer>(blen);
	l.dst = std::make_unique<Buffer>(blen);
	if (!l.src->data() || !l.dst->data()) {
		errorf("cannot map 2 x %zu bytes", blen);
		return false;
	}
	l.src_mr.reset(ibv_reg_mr(l.pd.get(), l.src->data(), blen, access));
	if (!l.src_mr) {
		errorf("ibv_reg_mr(%zu bytes): %s", blen, std::strerror(errno));
		return false;
	}
	l.dst_mr.reset(ibv_reg_mr(l.pd.get(), l.dst->data(), blen, access));
	if (!l.dst_mr) {
		errorf("ibv_reg_mr(%zu bytes): %s", blen, std::strerror(errno));
		return false;
	}

	ibv_qp_init_attr ia = {};
	ia.send_cq = l.cq.get();
	ia.recv_cq = l.cq.get();
	ia.qp_type = o.qpt;
	ia.sq_sig_all = 0;
	ia.cap.max_send_wr = std::min<uint32_t>(kQueueDepth, l.dev_attr.max_qp_wr);
	ia.cap.max_recv_wr = std::min<uint32_t>(kQueueDepth, l.dev_attr.max_qp_wr);
	ia.cap.max_send_sge = std::min<uint32_t>(o.nsge, l.dev_attr.max_sge);
	ia.cap.max_recv_sge = std::min<uint32_t>(o.nsge, l.dev_attr.max_sge);
	ia.cap.max_inline_data = o.use_inline ? 64 : 0;
	if (o.use_srq) {
		ibv_srq_init_attr sa = {};
		sa.attr.max_wr = ia.cap.max_recv_wr;
		sa.attr.max_sge = ia.cap.max_recv_sge;
		l.srq.reset(ibv_create_srq(l.pd.get(), &sa));
		if (!l.srq) {
			errorf("ibv_create_srq(wr %u, sge %u): %s", sa.attr.max_wr,
			       sa.attr.max_sge, std::strerror(errno));
			return false;
		}
		ia.srq = l.srq.get();
		ia.cap.max_recv_wr = 0;
		ia.cap.max_recv_sge = 0;
	}
	if (!o.mode.empty() || o.priority >= 0)
		l.qp.reset(create_qp_mode(o, l, ia));
	else
		l.qp.reset(ibv_create_qp(l.pd.get(), &ia));
	if (!l.qp) {
		errorf("ibv_create_qp(%s, wr %u, sge %u, inline %u): %s",
		       o.qpt == IBV_QPT_RC ? "RC" : "UC", ia.cap.max_send_wr,
		       ia.cap.max_send_sge, ia.cap.max_inline_data,
		       std::strerror(errno));
		return false;
	}
	l.max_inline = o.use_inline ? ia.cap.max_inline_data : 0;
	uint32_t recv_sge = o.use_srq ? std::min<uint32_t>(o.nsge,
							   l.dev_attr.max_sge)
				      : ia.cap.max_recv_sge;
	l.max_sge = std::max<uint32_t>(1, std::min(ia.cap.max_send_sge,
						   recv_sge));
	std::mt19937 rng(std::random_device{}());
	l.psn = rng() & 0xffffff;

	ibv_qp_attr a = {};
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = (uint8_t)o.ib_port;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
			    (o.qpt == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ : 0);
	if (ibv_modify_qp(l.qp.get(), &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		errorf("modify QP to INIT: %s", std::strerror(errno));
		return false;
	}
	if (l.chan && ibv_req_notify_cq(l.cq.get(), 0)) {
		errorf("ibv_req_notify_cq: %s", std::strerror(errno));
		return false;
	}
	return true;
}

struct Remote {
	uint32_t qpn = 0, psn = 0;
	ibv_gid gid = {};
	uint64_t src_addr = 0, dst_addr = 0;
	uint32_t src_rkey = 0, dst_rkey = 0;
	int active_mtu = 0;
	uint64_t max_msg = 0;
};

std::string info_line(const Local &l, int extra_mtu)
{
	std::ostringstream s;
	s << "INFO qpn=" << l.qp->qp_num << " psn=" << l.psn
	  << " gid=" << gid_str(l.gid)
	  << " src=" << (uintptr_t)l.src->data() << " srckey=" << l.src_mr->rkey
	  << " dst=" << (uintptr_t)l.dst->data() << " dstkey=" << l.dst_mr->rkey
	  << " mtu=" << mtu_bytes(l.port_attr.active_mtu)
	  << " maxmsg=" << l.port_attr.max_msg_sz;
	if (extra_mtu)
		s << " pmtu=" << extra_mtu;
	return s.str();
}

template <typename T>
bool get_field(const Msg &m, const char *k, T &out)
{
	auto it = m.find(k);
	if (it == m.end() || !parse_num(std::string_view(it->second), out)) {
		errorf("control protocol: missing or bad field '%s'", k);
		return false;
	}
	return true;
}

bool parse_info(const Msg &m, Remote &r)
{
	auto it = m.find("gid");
	if (it == m.end() || !parse_gid(it->second, r.gid)) {
		errorf("control protocol: bad gid");
		return false;
	}
	return get_field(m, "qpn", r.qpn) && get_field(m, "psn", r.psn) &&
	       get_field(m, "src", r.src_addr) &&
	       get_field(m, "srckey", r.src_rkey) &&
	       get_field(m, "dst", r.dst_addr) &&
	       get_field(m, "dstkey", r.dst_rkey) &&
	       get_field(m, "mtu", r.active_mtu) &&
	       get_field(m, "maxmsg", r.max_msg);
}

bool connect_qp(const Options &o, Local &l, const Remote &r, int pmtu)
{
	ibv_qp_attr a = {};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	uint8_t rd = (uint8_t)std::min(16, l.dev_attr.max_qp_rd_atom);
	uint8_t rd_init = (uint8_t)std::min(16, l.dev_attr.max_qp_init_rd_atom);

	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = to_ibv_mtu(pmtu);
	a.dest_qp_num = r.qpn;
	a.rq_psn = r.psn;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = r.gid;
	a.ah_attr.grh.sgid_index = (uint8_t)l.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = (uint8_t)o.ib_port;
	a.ah_attr.sl = o.sl;
	if (o.qpt == IBV_QPT_RC) {
		a.max_dest_rd_atomic = rd ? rd : 1;
		a.min_rnr_timer = 12;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (ibv_modify_qp(l.qp.get(), &a, mask)) {
		errorf("modify QP to RTR (path_mtu %d, dest qpn 0x%x, dgid %s): %s",
		       pmtu, r.qpn, gid_str(r.gid).c_str(), std::strerror(errno));
		return false;
	}
	std::memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = l.psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (o.qpt == IBV_QPT_RC) {
		a.timeout = o.ack_timeout;	// 4.096 us * 2^N
		a.retry_cnt = o.retry_cnt;
		a.rnr_retry = 7;	// infinite
		a.max_rd_atomic = rd_init ? rd_init : 1;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(l.qp.get(), &a, mask)) {
		errorf("modify QP to RTS: %s", std::strerror(errno));
		return false;
	}
	return true;
}

// ------------------------------------------------------ completions

// Set once the device went away under us (rdma link delete, netdev
// unregister, rmmod): ib_uverbs closed the completion channel and queued
// IBV_EVENT_DEVICE_FATAL.  Nothing on this device can complete any more, and
// the peer may be unreachable (the control connection often shares the
// link): the run ends at once instead of waiting for the peer.
bool g_device_lost;

void note_device_lost(Local &l, const char *what)
{
	int err = errno;
	std::string ev = "no async event";
	int fd = l.ctx->async_fd;
	int fl = fcntl(fd, F_GETFL);
	auto deadline = Clock::now() + std::chrono::seconds(2);

	g_device_lost = true;
	// The removal's IBV_EVENT_DEVICE_FATAL can be queued after the CQ fd
	// failed, behind other events (a GID table change): wait for it a
	// moment instead of reporting whatever came first.
	if (fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0) {
		while (true) {
			ibv_async_event e;
			if (ibv_get_async_event(l.ctx.get(), &e) == 0) {
				auto type = e.event_type;
				ev = std::string("async event ") +
				     (type == IBV_EVENT_DEVICE_FATAL ?
					      "IBV_EVENT_DEVICE_FATAL: " : "") +
				     ibv_event_type_str(type);
				ibv_ack_async_event(&e);
				if (type == IBV_EVENT_DEVICE_FATAL)
					break;
				continue;
			}
			auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
				deadline - Clock::now()).count();
			struct pollfd p = { fd, POLLIN, 0 };
			if (left <= 0 || ::poll(&p, 1, (int)left) <= 0 ||
			    !(p.revents & POLLIN))
				break;
		}
	}
	errorf("device lost: %s: %s (%s)", what, std::strerror(err), ev.c_str());
}

// A post verb failed with @e.  EIO is how the provider reports a queue
// whose kernel side is gone (its mapping replaced after the device was
// removed): take the device's async event to say so, as for the CQ.
std::string post_failed(Local &l, const char *verb, int e)
{
	if (e == EIO) {
		errno = EIO;
		note_device_lost(l, verb);
	}
	return std::string(verb) + ": " + std::strerror(e);
}

// The device's async fd woke up: take one event.  True when the device
// is gone (IBV_EVENT_DEVICE_FATAL, or an fd in error with nothing to read).
bool async_device_gone(Local &l, short revents)
{
	ibv_async_event e;
	int fl = fcntl(l.ctx->async_fd, F_GETFL);

	if (fl >= 0 && !(fl & O_NONBLOCK))
		fcntl(l.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	if (ibv_get_async_event(l.ctx.get(), &e)) {
		if (!(revents & (POLLERR | POLLHUP)))
			return false;
		g_device_lost = true;
		errorf("device lost: async event fd in error (device fatal)");
		return true;
	}
	auto type = e.event_type;
	ibv_ack_async_event(&e);
	if (type != IBV_EVENT_DEVICE_FATAL)
		return false;
	g_device_lost = true;
	errorf("device lost: async event IBV_EVENT_DEVICE_FATAL while waiting "
	       "for the peer");
	return true;
}

// Polls until the completion of wr_id is available.  Returns false on
// timeout or on a CQ error; a completion with an error status is returned
// normally for the caller to report.
bool wait_wc(Local &l, uint64_t wr_id, int timeout_s, ibv_wc &out)
{
	auto deadline = Clock::now() + std::chrono::seconds(timeout_s);

	while (true) {
		auto it = l.stash.find(wr_id);
		if (it != l.stash.end()) {
			out = it->second;
			l.stash.erase(it);
			return true;
		}
		ibv_wc wc[16];
		int n = ibv_poll_cq(l.cq.get(), 16, wc);
		if (n == -EIO) {
			errno = EIO;
			note_device_lost(l, "ibv_poll_cq");
			return false;
		}
		if (n < 0) {
			errorf("ibv_poll_cq failed (%d)", n);
			return false;
		}
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				logv("completion wr_id 0x%" PRIx64 " status %s",
				     (uint64_t)wc[i].wr_id,
				     ibv_wc_status_str(wc[i].status));
			l.stash[wc[i].wr_id] = wc[i];
		}
		if (n > 0)
			continue;
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			deadline - Clock::now()).count();
		if (left <= 0) {
			errorf("timeout: no completion for wr_id 0x%" PRIx64
			       " within %d s", wr_id, timeout_s);
			return false;
		}
		if (!l.chan) {
			sched_yield();
			continue;
		}
		// The CQ is armed: after an event, re-arm and then poll again so
		// that nothing that arrived in between is missed.
		struct pollfd pfd = { l.chan->fd, POLLIN, 0 };
		int r = ::poll(&pfd, 1, (int)std::min<long long>(left, 1000));
		if (r < 0 && errno != EINTR) {
			errorf("poll(completion channel): %s", std::strerror(errno));
			return false;
		}
		if (r <= 0)
			continue;	// also covers a missed event: we re-poll
		ibv_cq *ev_cq;
		void *ev_ctx;
		if (ibv_get_cq_event(l.chan.get(), &ev_cq, &ev_ctx)) {
			if (errno == EIO) {
				note_device_lost(l, "ibv_get_cq_event");
				return false;
			}
			errorf("ibv_get_cq_event: %s", std::strerror(errno));
			return false;
		}
		if (++l.unacked_events >= 64) {
			ibv_ack_cq_events(l.cq.get(), l.unacked_events);
			l.unacked_events = 0;
		}
		if (ibv_req_notify_cq(l.cq.get(), 0)) {
			errorf("ibv_req_notify_cq: %s", std::strerror(errno));
			return false;
		}
	}
}

// Splits [off, off+len) of an MR into up to n SGEs of unequal lengths.
std::vector<ibv_sge> make_sges(const Buffer &b, const ibv_mr *mr, uint64_t off,
			       uint64_t len, uint32_t n)
{
	std::vector<ibv_sge> v;
	if (len == 0)
		return v;
	n = (uint32_t)std::min<uint64_t>(n, len);
	uint64_t pos = 0;
	for (uint32_t i = 0; i < n; i++) {
		// boundaries at roughly len*(i+1)/n, nudged so pieces differ
		uint64_t end = i + 1 == n ? len : len * (i + 1) / n + (i % 2 ? 1 : 0);
		end = std::min(std::max(end, pos + 1), len - (n - 1 - i));
		ibv_sge s;
		s.addr = (uintptr_t)(b.data() + off + pos);
		s.length = (uint32_t)(end - pos);
		s.lkey = mr->lkey;
		v.push_back(s);
		pos = end;
	}
	return v;
}

// ---------------------------------------------------------- the cases

struct CaseSpec {
	uint32_t id = 0;
	Op op = Op::Write;
	bool server_inits = false;
	uint64_t size = 0;
	uint32_t iter = 0;
	uint64_t seed = 0;
	uint64_t doff = 0;	// destination offset (target's dst buffer)
	uint64_t soff = 0;	// source offset (source side's src buffer)
	uint64_t chunk = 0;	// max bytes per WR (WRITE/READ split above max_msg)
	unsigned fault = 0;	// 1: corrupt the arrived data (--inject-fault)

	bool i_am_initiator(bool server) const { return server == server_inits; }
	// The side where data arrives: the responder, except for READ.
	bool i_am_target(bool server) const
	{
		return op == Op::Read ? i_am_initiator(server) : !i_am_initiator(server);
	}
	uint32_t imm() const { return (uint32_t)(seed >> 32); }
};

std::string case_line(const CaseSpec &c)
{
	std::ostringstream s;
	s << "CASE n=" << c.id << " op=" << op_info(c.op).name
	  << " init=" << (c.server_inits ? "s" : "c") << " size=" << c.size
	  << " iter=" << c.iter << " seed=" << c.seed << " doff=" << c.doff
	  << " soff=" << c.soff << " chunk=" << c.chunk
	  << " fault=" << (c.fault ? 1 : 0);
	return s.str();
}

bool parse_case(const Msg &m, CaseSpec &c)
{
	auto it = m.find("op");
	const OpInfo *oi = it == m.end() ? nullptr : find_op(it->second);
	auto in = m.find("init");
	if (!oi || in == m.end() || (in->second != "s" && in->second != "c")) {
		errorf("control protocol: bad CASE");
		return false;
	}
	c.op = oi->op;
	c.server_inits = in->second == "s";
	return get_field(m, "n", c.id) && get_field(m, "size", c.size) &&
	       get_field(m, "iter", c.iter) && get_field(m, "seed", c.seed) &&
	       get_field(m, "doff", c.doff) && get_field(m, "soff", c.soff) &&
	       get_field(m, "chunk", c.chunk) && get_field(m, "fault", c.fault);
}

constexpr uint64_t wrid(uint32_t case_id, unsigned kind, uint32_t idx)
{
	return ((uint64_t)case_id << 24) | ((uint64_t)kind << 20) | idx;
}

enum { WR_RECV = 1, WR_SEND = 2 };

// Each side's view of the run.
struct Side {
	const Options &o;
	Local &l;
	Remote &r;
	bool server;
	uint64_t buf_limit;	// largest size the buffers hold
};

// Target: post the receive the op consumes (if it consumes one).
bool post_case_recv(Side &s, const CaseSpec &c, std::string &err)
{
	if (!op_info(c.op).needs_recv)
		return true;
	std::vector<ibv_sge> sg;
	if (c.op != Op::WriteImm)
		sg = make_sges(*s.l.dst, s.l.dst_mr.get(), c.doff,
			       c.size + kRecvExtra, s.l.max_sge);
	ibv_recv_wr wr = {}, *bad = nullptr;
	wr.wr_id = wrid(c.id, WR_RECV, 0);
	wr.sg_list = sg.data();
	wr.num_sge = (int)sg.size();
	int e = s.l.srq ? ibv_post_srq_recv(s.l.srq.get(), &wr, &bad)
			: ibv_post_recv(s.l.qp.get(), &wr, &bad);
	if (e) {
		err = post_failed(s.l, s.l.srq ? "ibv_post_srq_recv" : "ibv_post_recv", e);
		return false;
	}
	return true;
}

// Target: write the canary; post the receive the op consumes, unless
// --recv-late defers it (the caller posts it after READY).
bool prepare(Side &s, const CaseSpec &c, std::string &err)
{
	if (c.doff < kGuard || c.soff < kGuard ||
	    c.size > s.buf_limit ||
	    c.doff + c.size + kRecvExtra + kGuard > s.l.dst->size() ||
	    c.soff + c.size > s.l.src->size()) {
		err = "case does not fit the buffers";
		return false;
	}
	if (c.i_am_target(s.server)) {
		mv::prepare_destination(s.l.dst->data(), c.doff, c.size, kGuard,
					c.seed);
		if (!s.o.recv_late_ms && !post_case_recv(s, c, err))
			return false;
	}
	// The source side fills its buffer (for READ that is the responder).
	if (!c.i_am_target(s.server))
		mv::fill_pattern(s.l.src->data() + c.soff, c.size, c.seed);
	return true;
}

// Initiator: post the op (split into chunks for WRITE/READ above the max
// message size) and wait for every send completion.  Returns "ok" or why not.
std::string initiate(Side &s, const CaseSpec &c)
{
	const bool read = c.op == Op::Read;
	const uint64_t chunk = c.chunk ? c.chunk : c.size;
	const uint64_t nchunks = c.size == 0 ? 1 : (c.size + chunk - 1) / chunk;
	const uint64_t remote_base = read ? s.r.src_addr + c.soff
					  : s.r.dst_addr + c.doff;
	const uint32_t rkey = read ? s.r.src_rkey : s.r.dst_rkey;
	const uint64_t local_off = read ? c.doff : c.soff;
	const Buffer &lb = read ? *s.l.dst : *s.l.src;
	const ibv_mr *lmr = read ? s.l.dst_mr.get() : s.l.src_mr.get();
	uint64_t posted = 0, done = 0;
	const uint64_t window = kQueueDepth / 2;

	while (done < nchunks) {
		while (posted < nchunks && posted - done < window) {
			uint64_t off = posted * chunk;
			uint64_t len = std::min(chunk, c.size - off);
			auto sg = make_sges(lb, lmr, local_off + off, len, s.l.max_sge);
			ibv_send_wr wr = {}, *bad = nullptr;

			wr.wr_id = wrid(c.id, WR_SEND, (uint32_t)posted);
			wr.sg_list = sg.data();
			wr.num_sge = (int)sg.size();
			wr.send_flags = IBV_SEND_SIGNALED;
			switch (c.op) {
			case Op::Write: wr.opcode = IBV_WR_RDMA_WRITE; break;
			case Op::WriteImm:
				// only the last chunk carries the immediate: one
				// receive WQE is posted for the whole case
				wr.opcode = posted + 1 == nchunks ?
					IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
				break;
			case Op::Read: wr.opcode = IBV_WR_RDMA_READ; break;
			case Op::Send: wr.opcode = IBV_WR_SEND; break;
			case Op::SendImm: wr.opcode = IBV_WR_SEND_WITH_IMM; break;
			}
			if (c.op == Op::WriteImm || c.op == Op::SendImm)
				wr.imm_data = htonl(c.imm());
			if (c.op != Op::Read && len <= s.l.max_inline && s.l.max_inline)
				wr.send_flags |= IBV_SEND_INLINE;
			wr.wr.rdma.remote_addr = remote_base + off;
			wr.wr.rdma.rkey = rkey;
			int e = ibv_post_send(s.l.qp.get(), &wr, &bad);
			if (e)
				return post_failed(s.l, "ibv_post_send", e);
			posted++;
		}
		ibv_wc wc;
		if (!wait_wc(s.l, wrid(c.id, WR_SEND, (uint32_t)done), s.o.timeout, wc))
			return g_device_lost ? "device lost, no send completion"
					     : "timeout waiting for the send completion";
		if (wc.status != IBV_WC_SUCCESS)
			return std::string("send completion error: ") +
			       ibv_wc_status_str(wc.status) + " (vendor_err " +
			       std::to_string(wc.vendor_err) + ")";
		done++;
	}
	return "ok";
}

// The control connection died mid-run (the server's process or its device
// went).  Say what the data path does now: a signaled 1-byte RDMA WRITE to
// the peer's buffer.  With the peer gone it ends with an error completion
// (retry exceeded after the transport's retries), which is what a verbs
// user with a vanished peer sees; "ok" if the peer's QP still answers.
std::string probe_peer(Side &s)
{
	ibv_sge sg = {};
	sg.addr = (uintptr_t)(s.l.src->data() + kSlack);
	sg.length = 1;
	sg.lkey = s.l.src_mr->lkey;
	ibv_send_wr wr = {}, *bad = nullptr;
	wr.wr_id = wrid(0, WR_SEND, 0);
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = s.r.dst_addr + kSlack;
	wr.wr.rdma.rkey = s.r.dst_rkey;
	int e = ibv_post_send(s.l.qp.get(), &wr, &bad);
	if (e)
		return "probe: " + post_failed(s.l, "ibv_post_send", e);
	ibv_wc wc;
	if (!wait_wc(s.l, wr.wr_id, s.o.timeout, wc))
		return g_device_lost ? "probe: device lost"
				     : "probe: no completion";
	if (wc.status != IBV_WC_SUCCESS)
		return std::string("probe WRITE: completion error: ") +
		       ibv_wc_status_str(wc.status);
	return "ok";
}

std::string hex8(uint8_t v)
{
	char b[8];
	std::snprintf(b, sizeof(b), "0x%02x", v);
	return b;
}

// Target: wait for the receive completion if any, then check every byte.
// Returns "ok" or a one-line description of the first problem.
std::string verify(Side &s, const CaseSpec &c, bool initiator_failed)
{
	std::string pre;
	if (op_info(c.op).needs_recv) {
		ibv_wc wc;
		if (!wait_wc(s.l, wrid(c.id, WR_RECV, 0),
			     initiator_failed ? 2 : s.o.timeout, wc))
			return g_device_lost ? "device lost, no receive completion"
					     : "no receive completion";
		if (wc.status != IBV_WC_SUCCESS)
			return std::string("receive completion error: ") +
			       ibv_wc_status_str(wc.status);
		ibv_wc_opcode want = c.op == Op::WriteImm ? IBV_WC_RECV_RDMA_WITH_IMM
							  : IBV_WC_RECV;
		if (wc.opcode != want)
			return "receive completion opcode " + std::to_string(wc.opcode) +
			       ", expected " + std::to_string(want);
		bool has_imm = wc.wc_flags & IBV_WC_WITH_IMM;
		bool want_imm = c.op == Op::WriteImm || c.op == Op::SendImm;
		if (has_imm != want_imm)
			return std::string("IBV_WC_WITH_IMM ") +
			       (has_imm ? "set" : "missing");
		if (want_imm && ntohl(wc.imm_data) != c.imm()) {
			char b[96];
			std::snprintf(b, sizeof(b), "imm_data 0x%08x, expected 0x%08x",
				      ntohl(wc.imm_data), c.imm());
			return b;
		}
		// For WRITE with immediate the receive WQE gets no payload, and
		// byte_len reports the RDMA length (as rxe and mlx5 do).
		if ((c.op != Op::WriteImm || !c.chunk) && wc.byte_len != c.size)
			return "byte_len " + std::to_string(wc.byte_len) +
			       ", expected " + std::to_string(c.size);
		if (wc.qp_num != s.l.qp->qp_num)
			return "qp_num " + std::to_string(wc.qp_num) + " in the CQE";
	}
	// Plain WRITE on UC has no completion on the target: data may still
	// be on its way when the initiator's completion is reported.
	auto deadline = Clock::now() + std::chrono::seconds(
		s.o.qpt == IBV_QPT_UC && c.op == Op::Write && !initiator_failed ? 3 : 0);
	if (c.fault) {
		// Flip a byte in the middle of the message (or, for an empty
		// message, the first guard byte after it): must be reported.
		s.l.dst->data()[c.doff + c.size / 2] ^= 0x5a;
	}
	mv::RegionCheck rc;
	while (true) {
		rc = mv::check_destination(s.l.dst->data(), c.doff, c.size, kGuard,
					   c.seed);
		if (rc.m.ok || Clock::now() >= deadline)
			break;
		::usleep(10000);
	}
	if (rc.m.ok)
		return "ok";
	long long off = (long long)rc.m.first_bad;
	if (!std::strcmp(rc.where, "guard-before"))
		off -= (long long)kGuard;
	else if (!std::strcmp(rc.where, "guard-after"))
		off += (long long)c.size;
	std::ostringstream m;
	m << (std::strcmp(rc.where, "region") ? "write outside the message ("
					      : "data mismatch (")
	  << rc.where << "): first bad offset " << off << " expected "
	  << hex8(rc.m.expected) << " actual " << hex8(rc.m.actual) << ", "
	  << rc.m.nbad << " bad byte(s)";
	return m.str();
}

std::string human_size(uint64_t v)
{
	if (v && !(v % (1ull << 20)))
		return std::to_string(v >> 20) + "M";
	if (v >= 65536 && !(v % 1024))
		return std::to_string(v >> 10) + "K";
	return std::to_string(v);
}

std::string encode_status(const std::string &s)
{
	std::string r = s;
	std::replace(r.begin(), r.end(), ' ', '_');
	return r;
}

std::string decode_status(const std::string &s)
{
	std::string r = s;
	std::replace(r.begin(), r.end(), '_', ' ');
	return r;
}

// ------------------------------------------------------------ roles

uint64_t max_of(const std::vector<uint64_t> &v)
{
	return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

int run_server(const Options &o)
{
	Local l;
	if (!open_device(o, l))
		return 1;
	std::printf("# server: %s port %d gid[%d] %s active_mtu %d\n",
		    o.dev.c_str(), o.ib_port, l.gid_index, gid_str(l.gid).c_str(),
		    mtu_bytes(l.port_attr.active_mtu));
	auto conn = server_accept(o);
	if (!conn)
		return 1;
	const int msg_to = o.timeout * 3 + 30;

	auto hello = conn->expect("HELLO", msg_to);
	if (!hello)
		return 1;
	Options so = o;
	int ver = 0, nsge = 1, inl = 0;
	uint64_t maxsz = 0;
	std::string qpt;
	if (!get_field(*hello, "v", ver) || !get_field(*hello, "maxsz", maxsz) ||
	    !get_field(*hello, "sge", nsge) || !get_field(*hello, "inline", inl) ||
	    !get_field(*hello, "timeout", so.timeout))
		return 1;
	if (ver != kProtoVersion) {
		errorf("client speaks protocol %d, server %d", ver, kProtoVersion);
		return 1;
	}
	auto qi = hello->find("qp");
	if (qi == hello->end() || (qi->second != "rc" && qi->second != "uc") ||
	    nsge < 1 || nsge > 64 || maxsz > (1ull << 34) || so.timeout < 1) {
		errorf("bad HELLO parameters");
		return 1;
	}
	so.qpt = qi->second == "rc" ? IBV_QPT_RC : IBV_QPT_UC;
	auto mi = hello->find("mode");
	if (mi != hello->end() && o.mode.empty()) {	// --mode on the server wins
		if (mi->second != "standard" && mi->second != "metaroce" &&
		    mi->second != "auto") {
			errorf("bad HELLO mode");
			return 1;
		}
		so.mode = mi->second;
	}
	so.nsge = nsge;
	so.use_inline = inl != 0;
	if (!create_resources(so, l, maxsz))
		return 1;
	conn->watch(l.ctx->async_fd,
		    [&l](short ev) { return async_device_gone(l, ev); });
	if (!conn->send_line(info_line(l, 0)))
		return 1;
	auto cinfo = conn->expect("INFO", msg_to);
	Remote r;
	int pmtu = 0;
	if (!cinfo || !parse_info(*cinfo, r) || !get_field(*cinfo, "pmtu", pmtu))
		return 1;
	if (!valid_mtu(pmtu)) {
		errorf("bad path MTU %d from client", pmtu);
		return 1;
	}
	if (!connect_qp(so, l, r, pmtu))
		return 1;
	if (!conn->send_line("RTS"))
		return 1;

	Side side{ so, l, r, true, maxsz };
	unsigned failures = 0, cases = 0;
	while (true) {
		auto line = conn->recv_line(msg_to);
		if (!line)
			return 1;
		if (line->rfind("BYE", 0) == 0) {
			conn->send_line("BYE failures=" + std::to_string(failures));
			break;
		}
		// Re-parse through expect()'s logic.
		auto toks = split(*line, ' ');
		if (toks.empty() || toks[0] != "CASE") {
			errorf("control protocol: unexpected '%s'", line->c_str());
			return 1;
		}
		Msg m;
		for (size_t i = 1; i < toks.size(); i++) {
			size_t eq = toks[i].find('=');
			if (eq != std::string_view::npos)
				m.emplace(std::string(toks[i].substr(0, eq)),
					  std::string(toks[i].substr(eq + 1)));
		}
		CaseSpec c;
		if (!parse_case(m, c))
			return 1;
		cases++;
		std::string err, st = "ok";
		if (!prepare(side, c, err)) {
			conn->send_line("READY st=" + encode_status(err));
			failures++;
			errorf("case %u: %s", c.id, err.c_str());
			return 1;
		}
		if (c.i_am_initiator(true))
			st = initiate(side, c);
		if (g_device_lost) {
			std::printf("# server: case %u: %s\n", c.id, st.c_str());
			return 1;
		}
		if (!conn->send_line("READY st=" + encode_status(st)))
			return 1;
		// --recv-late: the client initiates now, before the receive
		if (o.recv_late_ms && c.i_am_target(true) && st == "ok") {
			std::this_thread::sleep_for(
				std::chrono::milliseconds(o.recv_late_ms));
			if (!post_case_recv(side, c, err))
				st = err;
		}
		auto done = conn->expect("DONE", msg_to);
		if (!done)
			return 1;
		std::string verdict = "ok";
		auto dst = done->find("st");
		bool peer_failed = dst == done->end() || dst->second != "ok";
		if (c.i_am_target(true))
			verdict = verify(side, c, peer_failed || st != "ok");
		if (g_device_lost) {
			std::printf("# server: case %u: %s\n", c.id, verdict.c_str());
			return 1;
		}
		if (st != "ok" || verdict != "ok")
			failures++;
		if (verdict != "ok")
			std::printf("# server: case %u %s size %" PRIu64 ": %s\n", c.id,
				    op_info(c.op).name, c.size, verdict.c_str());
		if (!conn->send_line("RESULT st=" + encode_status(verdict)))
			return 1;
	}
	print_final_mode(so, l.qp.get());
	std::printf("# server: %u case(s), %u failure(s)\n", cases, failures);
	return failures ? 1 : 0;
}

int run_client(const Options &o)
{
	Local l;
	if (!open_device(o, l))
		return 1;
	std::vector<uint64_t> upper;
	parse_sizes(o.sizes, 4096, upper);
	uint64_t maxsz = max_of(upper);

	auto conn = client_connect(o);
	if (!conn)
		return 1;
	const int msg_to = o.timeout * 3 + 30;
	{
		std::ostringstream h;
		h << "HELLO v=" << kProtoVersion
		  << " qp=" << (o.qpt == IBV_QPT_RC ? "rc" : "uc")
		  << " maxsz=" << maxsz << " sge=" << o.nsge
		  << " inline=" << (o.use_inline ? 1 : 0) << " timeout=" << o.timeout;
		if (!o.mode.empty())
			h << " mode=" << o.mode;
		if (!conn->send_line(h.str()))
			return 1;
	}
	auto sinfo = conn->expect("INFO", msg_to);
	Remote r;
	if (!sinfo || !parse_info(*sinfo, r))
		return 1;
	if (!create_resources(o, l, maxsz))
		return 1;
	conn->watch(l.ctx->async_fd,
		    [&l](short ev) { return async_device_gone(l, ev); });
	int local_mtu = mtu_bytes(l.port_attr.active_mtu);
	int pmtu = o.mtu ? o.mtu : std::min(local_mtu, r.active_mtu);
	if (!valid_mtu(pmtu)) {
		errorf("cannot derive a path MTU (local %d, remote %d)", local_mtu,
		       r.active_mtu);
		return 1;
	}
	if (o.mtu && (o.mtu > local_mtu || o.mtu > r.active_mtu))
		std::printf("# warning: --mtu %d above an active MTU (local %d, remote %d)\n",
			    o.mtu, local_mtu, r.active_mtu);
	if (!conn->send_line(info_line(l, pmtu)))
		return 1;
	if (!connect_qp(o, l, r, pmtu))
		return 1;
	if (!conn->expect("RTS", msg_to))
		return 1;

	std::vector<uint64_t> sizes;
	parse_sizes(o.sizes, (uint64_t)pmtu, sizes);
	uint64_t max_msg = std::min<uint64_t>(l.port_attr.max_msg_sz, r.max_msg);
	if (!max_msg)
		max_msg = 1ull << 31;
	const char *qpn = o.qpt == IBV_QPT_RC ? "rc" : "uc";

	std::printf("TAP version 13\n");
	std::printf("# mrxe-verify: dev %s gid[%d] %s -> %s, %s, path_mtu %d, "
		    "max_msg %" PRIu64 ", sge %u, inline %u, local qpn 0x%x remote 0x%x\n",
		    o.dev.c_str(), l.gid_index, gid_str(l.gid).c_str(),
		    gid_str(r.gid).c_str(), qpn, pmtu, max_msg, l.max_sge,
		    l.max_inline, l.qp->qp_num, r.qpn);
	std::fflush(stdout);

	Side side{ o, l, r, false, maxsz };
	unsigned id = 0, pass = 0, fail = 0, skip = 0, not_run = 0;
	bool fatal = false;
	std::vector<bool> dirs = { false };
	if (o.reverse)
		dirs.push_back(true);

	for (uint64_t size : sizes) {
		for (uint32_t it = 0; it < (uint32_t)o.iters; it++) {
			for (const OpInfo *oi : o.ops) {
				for (bool srv : dirs) {
					CaseSpec c;
					c.id = ++id;
					c.op = oi->op;
					c.server_inits = srv;
					c.size = size;
					c.iter = it;
					c.seed = mv::case_seed((uint32_t)oi->op, size, it,
							       srv ? 0x5e5e : 0xc1c1);
					c.doff = kSlack - (c.seed % 61);
					c.soff = kSlack - ((c.seed >> 8) % 53);
					std::string name = std::string(qpn) + " " + oi->name +
						(srv ? " s->c" : " c->s") + " size=" +
						human_size(size) + " iter=" + std::to_string(it);
					bool is_send = oi->op == Op::Send || oi->op == Op::SendImm;
					if (fatal) {
						// The QP is in the error state: count the
						// rest, do not list each of them.
						id--;
						not_run++;
						continue;
					}
					if (is_send && size > max_msg) {
						std::printf("ok %u - %s # SKIP size above max_msg_sz "
							    "%" PRIu64 "\n", c.id, name.c_str(), max_msg);
						skip++;
						continue;
					}
					c.chunk = size > max_msg ? max_msg : 0;
					c.fault = c.id == o.inject_fault;

					auto t0 = Clock::now();
					std::string err, st = "ok", verdict = "ok", sverdict;
					if (!prepare(side, c, err)) {
						errorf("%s", err.c_str());
						return 1;
					}
					// control connection gone mid-case: report
					// what the data path says (RC: probe it)
					auto lost = [&]() {
						if (g_device_lost) {
							std::printf("not ok %u - %s # client: device lost\n"
								    "# device lost: run ended, %u case(s) "
								    "passed before\n1..%u\n",
								    c.id, name.c_str(), pass, c.id);
							std::fflush(stdout);
							return 1;
						}
						std::string why = st;
						if (why == "ok" && o.qpt == IBV_QPT_RC &&
						    !g_device_lost)
							why = probe_peer(side);
						std::printf("not ok %u - %s # control connection "
							    "lost; client: %s\n1..%u\n",
							    c.id, name.c_str(),
							    why == "ok" ? "probe WRITE completed"
									: why.c_str(),
							    c.id);
						std::fflush(stdout);
						return 1;
					};
					if (!conn->send_line(case_line(c)))
						return lost();
					// --recv-late: the server initiates before READY
					if (o.recv_late_ms && c.i_am_target(false)) {
						std::this_thread::sleep_for(std::chrono::milliseconds(
							o.recv_late_ms));
						if (!post_case_recv(side, c, err))
							st = err;
					}
					auto ready = conn->expect("READY", msg_to);
					if (!ready)
						return lost();
					std::string sst = decode_status((*ready)["st"]);
					if (c.i_am_initiator(false))
						st = initiate(side, c);
					if (!conn->send_line("DONE st=" + encode_status(st)))
						return lost();
					if (c.i_am_target(false))
						verdict = verify(side, c, st != "ok" || sst != "ok");
					if (g_device_lost) {
						std::printf("not ok %u - %s # client: %s\n",
							    c.id, name.c_str(),
							    (st != "ok" ? st : verdict).c_str());
						std::printf("# device lost: run ended, %u case(s) "
							    "passed before\n1..%u\n", pass, c.id);
						return 1;
					}
					auto res = conn->expect("RESULT", msg_to);
					if (!res)
						return lost();
					sverdict = decode_status((*res)["st"]);
					double ms = std::chrono::duration<double, std::milli>(
						Clock::now() - t0).count();

					std::string why;
					if (sst != "ok")
						why = "server: " + sst;
					else if (st != "ok")
						why = "client: " + st;
					else if (sverdict != "ok")
						why = "server: " + sverdict;
					else if (verdict != "ok")
						why = "client: " + verdict;
					if (why.empty()) {
						std::printf("ok %u - %s # %.1f ms\n", c.id,
							    name.c_str(), ms);
						pass++;
					} else {
						std::printf("not ok %u - %s # %s\n", c.id,
							    name.c_str(), why.c_str());
						fail++;
						// An error completion leaves the QP in the
						// error state: nothing after it can pass.
						if (why.find("completion") != std::string::npos ||
						    why.find("timeout") != std::string::npos ||
						    why.find("ibv_post") != std::string::npos)
							fatal = true;
					}
					std::fflush(stdout);
				}
			}
		}
	}
	conn->send_line("BYE failures=" + std::to_string(fail));
	auto bye = conn->expect("BYE", msg_to);
	unsigned sfail = 0;
	if (!bye || !get_field(*bye, "failures", sfail))
		return 1;
	if (not_run)
		std::printf("# aborted after the error above: %u case(s) not run\n",
			    not_run);
	print_final_mode(o, l.qp.get());
	std::printf("1..%u\n# pass %u fail %u skip %u not-run %u (server reported %u failure(s))\n",
		    id, pass, fail, skip, not_run, sfail);
	return (fail || sfail || not_run) ? 1 : 0;
}

} // namespace

int main(int argc, char **argv)
{
	Options o;
	int r = parse_args(argc, argv, o);
	if (r == -1)
		return 0;
	if (r)
		return r;
	std::signal(SIGPIPE, SIG_IGN);
	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	return o.server ? run_server(o) : run_client(o);
}
