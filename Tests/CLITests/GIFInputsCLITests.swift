// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

@Suite struct GIFInputsCLITests {
    @Test(arguments: [
        (["video/iphone_rotated.mov"], "x.mp4", "must end in .gif"),
        (
            ["video/iphone_rotated.mov", "images/pillow/hopper.png"], "x.gif",
            "is a video: give one video, or only images"
        ),
        (["video/iphone_rotated.mov", "video/iphone_rotated.mov"], "x.gif", "is a video")
    ])
    func mixedInputsAndWrongExtensionsAreUsageErrors(inputs: [String], output: String, message: String) throws {
        let dir = TestData.scratchDirectory("gifinputs")
        let out = dir.appendingPathComponent(output).path
        let r = try Shell.lapse(["gif"] + inputs.map(TestData.path) + ["-o", out])
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
