// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGIF
import TestSupport
import Testing

/// The GIF writer's failing initialisers (run under LeakSanitizer by `make leakcheck`, with FailingInitMediaTests).
@Suite struct FailingInitGIFTests {
    @Test func gifEncoder() throws {
        let dir = TestData.scratchDirectory("lapse-failing-init-gif")
        let path = dir.appendingPathComponent("a.gif").path
        let wide = try #require(throws: LapseError.self) {
            try GIFEncoder(url: URL(fileURLWithPath: path), width: 70000, height: 10)
        }
        #expect(wide.reason.contains("65535"), "\(wide)")
        let missing = dir.appendingPathComponent("no/folder/a.gif").path
        #expect(throws: LapseError.self) { try GIFEncoder(url: URL(fileURLWithPath: missing), width: 10, height: 10) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
