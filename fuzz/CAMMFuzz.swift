// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer entry point for the CAMM parser (scripts/fuzz.sh builds it with the toolchain's
// -sanitize=fuzzer): any bytes must parse or throw, never crash or read out of bounds.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCAMM(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    _ = try? CAMM.packets(in: bytes)
    _ = try? CAMM.gpsFixes(in: bytes, time: 0)
    return 0
}
