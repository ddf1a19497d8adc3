// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import Synchronization

/// Where the CLI talks to the user: progress and warnings on stderr, results and `--json` on stdout.
///
/// On a terminal (stderr is a TTY and TERM is not `dumb`) progress redraws one line, at most 10 times a second;
/// otherwise it prints a plain line at each 10% step; with `--quiet`, nothing but errors.
final class Console: Sendable {
    let quiet: Bool
    let json: Bool
    private let isTerminal: Bool
    /// What the writes to stderr left: one writer at a time.
    private struct Screen {
        var lastDraw = Date.distantPast
        var lastStep: [String: Int] = [:]
        var lineOpen = false

        mutating func closeLine() {
            if lineOpen { FileHandle.standardError.write(Data("\n".utf8)); lineOpen = false }
        }
    }
    private let screen = Mutex(Screen())

    init(quiet: Bool, json: Bool) {
        self.quiet = quiet
        self.json = json
        let term = ProcessInfo.processInfo.environment["TERM"] ?? ""
        isTerminal = isatty(2) == 1 && term != "dumb"
    }

    /// A progress handler to give to LapseKit jobs.
    var progress: ProgressHandler {
        { [self] event in self.show(event) }
    }

    /// A warning handler to give to LapseKit jobs.
    var warning: WarningHandler {
        { [self] message in self.warn(message) }
    }

    func show(_ event: ProgressEvent) {
        guard !quiet else { return }
        screen.withLock { draw(event, on: &$0) }
    }

    private func draw(_ event: ProgressEvent, on screen: inout Screen) {
        let done = event.total.map { event.completed >= $0 } ?? false
        // "1/1 image", "1 frame": the unit agrees with the total, or with the count when there is none.
        let unit = (event.total ?? event.completed) == 1 && event.unit.hasSuffix("s") ? String(event.unit.dropLast()) : event.unit
        if isTerminal {
            let now = Date()
            guard done || now.timeIntervalSince(screen.lastDraw) >= 0.1 else { return }
            screen.lastDraw = now
            var line = "\(event.stage) "
            if let fraction = event.fraction, let total = event.total {
                let width = 24
                let filled = Int(fraction * Double(width))
                line += "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
                line += "\(event.completed)/\(total) \(unit) \(Int(fraction * 100))%"
            } else {
                line += "\(event.completed) \(unit)"
            }
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + line + (done ? "\n" : "")).utf8))
            screen.lineOpen = !done
        } else {
            let step = event.fraction.map { Int($0 * 10) } ?? (event.completed / 100)
            guard screen.lastStep[event.stage] != step || done else { return }
            if done && screen.lastStep[event.stage] == 10 { return }
            screen.lastStep[event.stage] = done ? 10 : step
            let total = event.total.map { "/\($0)" } ?? ""
            let percent = event.fraction.map { " (\(Int($0 * 100))%)" } ?? ""
            FileHandle.standardError.write(Data("\(event.stage): \(event.completed)\(total) \(unit)\(percent)\n".utf8))
        }
    }

    /// A one-line warning on stderr (even with --quiet? no: quiet means quiet; warnings are shown unless quiet).
    func warn(_ message: String) {
        guard !quiet else { return }
        screen.withLock { s in
            s.closeLine()
            FileHandle.standardError.write(Data("warning: \(message)\n".utf8))
        }
    }

    /// An informational line on stderr (not shown with --quiet).
    func info(_ message: String) {
        guard !quiet else { return }
        screen.withLock { s in
            s.closeLine()
            FileHandle.standardError.write(Data("\(message)\n".utf8))
        }
    }

    /// The one-line error on stderr (always shown); with `--json`, also as a JSON object on stdout, in place of
    /// the summary: `{"error": {"code": …, "input": …, "message": …, "exit_status": …}}` (`code` one of
    /// ``LapseError/Code``'s names, `input` the file or URL it concerns when there is one, `message` the line
    /// shown on stderr without its `error: `).
    func error(_ message: String, code: String = "other", input: String? = nil, exitStatus: Int32) {
        if json {
            var object: [String: Any] = ["code": code, "message": message, "exit_status": Int(exitStatus)]
            if let input { object["input"] = input }
            if let data = try? JSONSerialization.data(withJSONObject: ["error": object], options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) {
                FileHandle.standardOutput.write(data + Data("\n".utf8))
            }
        }
        screen.withLock { s in
            s.closeLine()
            FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        }
    }

    /// The final summary: `lines` as text on stderr, or `object` as JSON on stdout with `--json`.
    func summary(_ lines: [String], json object: [String: Any]) {
        if json {
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) {
                FileHandle.standardOutput.write(data + Data("\n".utf8))
            }
        }
        guard !quiet else { return }
        screen.withLock { s in
            s.closeLine()
            // Without --json the summary is the command's result: stdout. With --json, stdout is for JSON only.
            let text = lines.joined(separator: "\n") + "\n"
            if json { FileHandle.standardError.write(Data(text.utf8)) } else { FileHandle.standardOutput.write(Data(text.utf8)) }
        }
    }
}

/// Human-readable byte counts ("1.4 MB").
func formatBytes(_ n: Int64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB"]
    var v = Double(n), i = 0
    while v >= 1000 && i < units.count - 1 { v /= 1000; i += 1 }
    return i == 0 ? "\(n) B" : String(format: "%.1f", v) + " " + units[i]
}

/// "1 frame", "2 frames": a count and its noun (`plural` when the noun is irregular).
func counted(_ n: Int, _ noun: String, _ plural: String? = nil) -> String {
    "\(n) " + (n == 1 ? noun : plural ?? noun + "s")
}
