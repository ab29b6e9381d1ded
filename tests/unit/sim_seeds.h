// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Seeds for the randomized simulations.  Each test runs a few fixed seeds
// plus fresh ones from std::random_device, so every CI run explores new
// cases; a failure prints its seed, and MRXE_SIM_SEEDS="s1 s2 ..." replays
// exactly those seeds (and only those) in every simulation test.
#pragma once

#include <cstdlib>
#include <random>
#include <sstream>
#include <vector>

inline std::vector<unsigned> sim_seeds(std::vector<unsigned> fixed, int nrandom)
{
	const char *env = std::getenv("MRXE_SIM_SEEDS");
	std::random_device rd;

	if (env) {
		std::istringstream in(env);
		std::vector<unsigned> v;
		unsigned s;

		while (in >> s)
			v.push_back(s);
		if (!v.empty())
			return v;
	}
	for (int i = 0; i < nrandom; i++)
		fixed.push_back(rd());
	return fixed;
}

// NAME=value in the environment overrides a simulation parameter
// (exploration only; unset: @def).
inline unsigned long long sim_env(const char *name, unsigned long long def)
{
	const char *v = std::getenv(name);

	return v ? std::strtoull(v, nullptr, 0) : def;
}
