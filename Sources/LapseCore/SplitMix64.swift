// SPDX-License-Identifier: GPL-3.0-or-later

/// A small deterministic random number generator (Steele, Lea & Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014), so that sampled fits (and tests' random cases) give the same answer every run.
package struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    /// A generator whose numbers follow from `seed` alone.
    package init(seed: UInt64) { state = seed }
    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
