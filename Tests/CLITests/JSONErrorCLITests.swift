// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Under `--json` an error is also a JSON object on stdout (a script reading stdout gets one object either way),
/// with the exit status and the one stderr line unchanged; without `--json`, stdout stays empty.
@Suite struct JSONErrorCLITests {
    static let missing = "/nonexistent/lapse-missing.mp4"

    @Test(arguments: [
        (["clip", missing, "-o", "OUT/a.mp4", "--start", "0", "--end", "1"], Int32(1), "lapse-missing.mp4"),
        (["gif", missing, "-o", "OUT/a.gif"], Int32(1), "lapse-missing.mp4"),
        (["hyperlapse", "--source", "video:" + missing, "-o", "OUT/a.mp4"], Int32(1), "lapse-missing.mp4"),
        (["video", "-o", "OUT/a.mp4"], Int32(64), "no input"),
        (["gif", TestData.path("video/iphone_rotated.mov"), "-o", "OUT/a.gif", "--fps", "ten"], Int32(64), "--fps"),
        (["frobnicate"], Int32(64), "unknown command 'frobnicate'")
    ])
    func errorsAreJSONUnderJSON(_ arguments: [String], _ status: Int32, _ mentions: String) throws {
        let dir = TestData.scratchDirectory("json-errors")
        let args = arguments.map { $0.replacingOccurrences(of: "OUT", with: dir.path) }
        let plain = try Shell.lapse(args)
        #expect(plain.status == status && plain.stdout.isEmpty, "\(plain.stdout)")
        let r = try Shell.lapse(args + ["--json"])
        #expect(r.status == status, "\(r.stderr)")
        let line = try #require(r.stderr.split(separator: "\n").first { $0.hasPrefix("error: ") })
        #expect(plain.stderr == r.stderr)
        let object = try #require(try JSONSummary.parse(Data(r.stdout.utf8)), "\(r.stdout)")
        #expect(object.keys.sorted() == ["error"])
        let error = try #require(object["error"] as? [String: Any])
        // Every key, in the style of the keys (snake_case); the input null when the error names none.
        #expect(error.keys.sorted() == ["code", "exit_status", "input", "message"], "\(error)")
        #expect((error["code"] as? String)?.wholeMatch(of: /[a-z]+(_[a-z]+)*/) != nil, "\(error)")
        if status == 64 { #expect(error["input"] is NSNull, "\(error)") }
        #expect(error["exit_status"] as? Int == Int(status))
        #expect(error["message"] as? String == String(line.dropFirst("error: ".count)))
        #expect((error["code"] as? String).map { status == 64 ? $0 == "usage" : $0 != "usage" } == true, "\(error)")
        #expect((error["message"] as? String)?.contains(mentions) == true)
        if status == 1 {
            #expect((error["input"] as? String)?.hasSuffix("lapse-missing.mp4") == true, "\(error)")
            #expect(error["code"] as? String == "invalid_input", "\(error)")
        }
    }
}
