// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The command line's parsing, through the built `lapse`: the last of an option's names given wins, `=` and a
/// space both give a value, and a value never swallows the option after it.
@Suite struct ArgumentsCLITests {
    static let clip = TestData.path("video/iphone_rotated.mov")

    /// `-o a --output b` and `--output a -o b` write b; `--output=b` and `-o b` are the same option.
    @Test(arguments: [
        ["-o", "A", "--output", "B"], ["--output", "A", "-o", "B"], ["--output=A", "-o", "B"], ["-o", "A", "--output=B"]
    ])
    func theLastNameGivenWins(_ outputs: [String]) throws {
        let dir = TestData.scratchDirectory("arguments")
        let a = dir.appendingPathComponent("a.gif").path
        let b = dir.appendingPathComponent("b.gif").path
        let args = outputs.map { $0.replacingOccurrences(of: "A", with: a).replacingOccurrences(of: "B", with: b) }
        let r = try Shell.lapse(["gif", Self.clip, "--duration", "0.3", "--width", "64", "--quiet"] + args)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: b) && !FileManager.default.fileExists(atPath: a))
    }

    /// An option where a value should be is a usage error naming both (it was taken as the value: `-o --fast`
    /// wrote a GIF named `--fast`); a value that starts with a dash and a digit is a value (a negative number).
    @Test func aValueNeverSwallowsAnOption() throws {
        let dir = TestData.scratchDirectory("arguments-swallow")
        let r = try Shell.lapse(["gif", Self.clip, "--duration", "0.3", "-o", "--fast"], directory: dir)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("error: -o needs a value (--fast is an option"), "\(r.stderr)")
        #expect((try FileManager.default.contentsOfDirectory(atPath: dir.path)).isEmpty)
        let heading = try Shell.lapse([
            "gif", Self.clip, "--duration", "0.3", "--start", "-1", "-o", dir.appendingPathComponent("n.gif").path
        ])
        #expect(
            heading.status == 64 && heading.stderr.contains("--start") && !heading.stderr.contains("needs a value"),
            "\(heading.stderr)")
    }

    /// `~` is `$HOME` in values and inputs the shell did not expand (quoted, or after `=`): the image read from and
    /// the video written to the HOME given.
    @Test func tildeIsHome() throws {
        let home = TestData.scratchDirectory("arguments-home")
        try FileManager.default.copyItem(
            atPath: TestData.path("images/pillow/hopper.png"), toPath: home.appendingPathComponent("in.png").path)
        let r = try Shell.lapse(
            ["video", "~/in.png", "--output=~/out.mp4", "--quiet"], environment: ["HOME": home.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("out.mp4").path))
    }
}
