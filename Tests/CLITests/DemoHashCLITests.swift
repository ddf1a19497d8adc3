// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The demo's MP4 (`make demo`: `scripts/demo.sh`, the stabilised hyperlapse of the real overpass video with a
/// keyframed camera) is byte for byte the one recorded in `Tests/Fixtures/demo-hyperlapse.sha256`: a change of
/// structure that changes no behaviour (issue #39) keeps it so. A change that means to change the picture records
/// the new hash in the same commit (`sha256sum demo/hyperlapse.mp4`), saying why.
@Suite struct DemoHashCLITests {
    @Test func theDemosMP4IsTheOneRecorded() throws {
        let dir = TestData.scratchDirectory("demo-hash")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let script = TestData.projectRoot.appendingPathComponent("scripts/demo.sh").path
        let r = try Shell.run("bash", [script, Shell.lapseBinary, TestData.root.path], directory: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let hash = try Shell.run("sha256sum", [dir.appendingPathComponent("demo/hyperlapse.mp4").path])
        let recorded = try String(
            contentsOfFile: TestData.projectRoot.appendingPathComponent("Tests/Fixtures/demo-hyperlapse.sha256").path,
            encoding: .utf8)
        #expect(
            hash.stdout.prefix(64) == recorded.trimmingCharacters(in: .whitespacesAndNewlines),
            "demo/hyperlapse.mp4 is \(hash.stdout.prefix(64)), recorded \(recorded)")
    }
}
