// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer entry point for the JPEG segment walk and the Multi-Picture Format index (scripts/fuzz.sh builds it
// with the toolchain's -sanitize=fuzzer): any bytes must give a range or none, never crash, read out of bounds or
// run away; a range found is not empty and does not start at the file's first byte.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultiPicture(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let range = MultiPicture.largeThumbnail(in: bytes) {
        precondition(range.lowerBound > 0 && !range.isEmpty)
    }
    return 0
}
