// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Progress on a pseudo-terminal (#18 item 6): one line per stage, redrawn in place, with a bar; the warning above
/// them; what the screen shows at the end is one finished line per stage and the summary. On a pipe, plain lines
/// and no escape sequences; with `--quiet`, nothing.
@Suite struct ProgressCLITests {
    let dir = TestData.scratchDirectory("progress-cli")
    let video = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    func arguments(_ name: String) -> [String] {
        [
            "hyperlapse", "--source", "video:" + video, "--frame-step", "2", "--size", "320x160", "-y",
            "--gif", dir.appendingPathComponent(name + ".gif").path, "--gif-width", "1000",
            "-o", dir.appendingPathComponent(name + ".mp4").path
        ]
    }

    /// Runs `lapse` on a pseudo-terminal (util-linux's `script`), its stdout and stderr both the terminal's.
    func onTerminal(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let command = ([Shell.lapseBinary] + arguments).map {
            "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
        .joined(separator: " ")
        let r = try Shell.run("/usr/bin/script", ["-qfec", command, "/dev/null"], environment: ["TERM": "xterm"])
        return (r.status, r.stdout)
    }

    /// What a terminal shows after `output`: carriage return, line feed, and the sequences the console writes
    /// (ESC[nF up n lines to the first column, ESC[K erase to the end of the line, ESC[J erase to the end of the
    /// screen); any other escape sequence fails the test.
    func screen(after output: String) -> [String] {
        // Scalars, not Characters: "\r\n" is one Character.
        var lines: [[Unicode.Scalar]] = [[]]
        var row = 0
        var col = 0
        var chars = Array(output.unicodeScalars)[...]
        while let c = chars.popFirst() {
            switch c {
            case "\r": col = 0
            case "\n":
                row += 1
                if row == lines.count { lines.append([]) }
            case "\u{1B}":
                guard chars.popFirst() == "[" else {
                    Issue.record("an escape sequence other than CSI")
                    return []
                }
                var digits = ""
                while let d = chars.first, ("0"..."9").contains(d) {
                    digits.unicodeScalars.append(d)
                    chars.removeFirst()
                }
                switch chars.popFirst() {
                case "F":
                    row -= Int(digits) ?? 1
                    col = 0
                case "K": lines[row] = Array(lines[row].prefix(col))
                case "J":
                    lines[row] = Array(lines[row].prefix(col))
                    lines.removeSubrange((row + 1)...)
                case let other:
                    Issue.record("unexpected escape sequence ESC[\(digits)\(String(describing: other))")
                    return []
                }
                #expect(row >= 0)
            default:
                if col < lines[row].count { lines[row][col] = c } else { lines[row].append(c) }
                col += 1
            }
        }
        return lines.map { String(String.UnicodeScalarView($0)) }.filter { !$0.isEmpty }
    }

    @Test func aTerminalShowsOneLinePerStage() throws {
        let (status, output) = try onTerminal(arguments("t"))
        #expect(status == 0, "\(output)")
        #expect(output.contains("\u{1B}[K") && output.contains("\u{1B}[1F"), "\(output)") // redrawn in place
        let shown = screen(after: output)
        // The warning, then one line per stage, then the summary: nothing of the redrawing left behind.
        #expect(
            shown.first == "warning: the GIF width asked for (1000) is more than the video's: the GIF is 320 wide",
            "\(shown)")
        let stages = shown.filter { !$0.hasPrefix("warning:") && !$0.hasPrefix("wrote ") }.prefix {
            !$0.hasPrefix("source ")
        }
        #expect(stages.count == 3, "\(shown)")
        #expect(
            stages.filter {
                $0.hasPrefix("lookup [########################] 60/60 points 100%, ") && $0.hasSuffix(" s")
            }.count == 1, "\(shown)")
        #expect(
            stages.filter {
                $0.hasPrefix("analyse [########################] 60/60 video frames 100%, 60 panoramas, ")
            }.count == 1, "\(shown)")
        #expect(
            stages.filter {
                $0.hasPrefix("render [########################] 60/60 video frames 100%, 60 frames, ")
                    && $0.hasSuffix(" s")
            }.count == 1, "\(shown)")
        #expect(
            shown.contains {
                $0.hasPrefix("wrote \(dir.appendingPathComponent("t.mp4").path): 320x160, 60 frames at 12 fps")
            }, "\(shown)")
        #expect(!output.contains("render: "), "\(output)")
    }

    @Test func aPipeGetsPlainLinesAndQuietNothing() throws {
        let piped = try Shell.lapse(arguments("p"))
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(!piped.stderr.contains("\u{1B}") && !piped.stdout.contains("\u{1B}"))
        #expect(piped.stderr.contains("\nrender: 60/60 video frames (100%), 60 frames\n"), "\(piped.stderr)")
        #expect(
            piped.stderr.hasPrefix("warning: the GIF width asked for (1000)")
                || piped.stderr.contains("\nwarning: the GIF width asked for (1000)"))

        let (status, output) = try onTerminal(arguments("q") + ["--quiet"])
        #expect(status == 0)
        #expect(output.isEmpty, "\(output)")
    }
}
