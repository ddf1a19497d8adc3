// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer entry point for the GPMF parser (scripts/fuzz.sh builds it with the toolchain's -sanitize=fuzzer):
// any bytes must parse or throw, never crash, read out of bounds or run away.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGPMF(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let items = try? GPMF.parse(bytes) {
        for item in items {
            _ = item.numbers()
            _ = item.text
            _ = item.items?.map { $0.numbers(types: Array("lllllllSS".utf8)) }
        }
    }
    _ = try? GPMF.gpsFixes(in: bytes, start: 0, duration: 1)
    _ = try? GPMF.gravity(in: bytes, start: 0, duration: 1)
    return 0
}
