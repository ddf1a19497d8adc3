// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Two runs on the same input give the same file whatever the memory held before (glibc fills new memory with a
/// different byte in each run): x264's AVX-512 code read memory it never set at this size, among others, so reruns
/// (e.g. a hyperlapse resumed after Ctrl-C) could differ.
@Suite struct RepeatableOutputCLITests {
    @Test func sameFileWhateverTheHeapHeld() throws {
        let dir = TestData.scratchDirectory("repeatable")
        let pillow = TestData.path("images/pillow")
        let images = try FileManager.default.contentsOfDirectory(atPath: pillow).filter { $0.hasSuffix(".jpg") }
            .sorted()
            .map { pillow + "/" + $0 }
        #expect(images.count >= 3)
        var outputs: [Data] = []
        for perturb in ["1", "170"] {
            let out = dir.appendingPathComponent("heap\(perturb).mp4").path
            let r = try Shell.lapse(
                ["video"] + images + ["--size", "320x160", "--image-duration", "0.2", "--quiet", "-o", out],
                environment: ["MALLOC_PERTURB_": perturb])
            #expect(r.status == 0, "\(r.stderr)")
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        #expect(outputs[0].count > 1000 && outputs[0] == outputs[1])
    }
}
