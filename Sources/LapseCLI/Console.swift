// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import Synchronization

/// Where the CLI talks to the user: progress and warnings on stderr, results and `--json` on stdout.
///
/// On a terminal (stderr is a TTY and TERM is not `dumb`) every stage under way has one line, redrawn in place at
/// most 10 times a second: `render [#########...............] 48/120 frames 40%, 11.6 frames/s, ETA 0:06` (rate
/// and ETA once the stage has run half a second); a finished stage's line stays, with the stage's time. Stages
/// that run at once (lookups ahead of rendering) each keep their own line. Otherwise (a pipe, a file) a plain line
/// at each 10% step; with `--quiet`, nothing but errors.
final class Console: Sendable {
    let quiet: Bool
    let json: Bool
    private let isTerminal: Bool
    /// What the writes to stderr left: one writer at a time.
    private struct Screen {
        var lastDraw = Date.distantPast
        var lastStep: [ProgressStage: Int] = [:]
        /// On a terminal: the stages whose lines are drawn at the bottom, in the order they began, from the
        /// first one not finished (a finished line above it is left where it is).
        var live: [(stage: ProgressStage, line: String, done: Bool)] = []
        /// When each stage's first event came.
        var started: [ProgressStage: Date] = [:]
        /// Lines of ``live`` on the screen, the cursor at the start of the line below them.
        var drawn = 0

        /// Rewrites the live lines in place, then drops the finished ones at the top.
        mutating func redraw() {
            var text = drawn > 0 ? "\u{1B}[\(drawn)F" : ""
            for entry in live { text += "\u{1B}[K" + entry.line + "\n" }
            FileHandle.standardError.write(Data(text.utf8))
            drawn = live.count
            while let first = live.first, first.done {
                live.removeFirst()
                drawn -= 1
            }
        }

        /// Draws the live lines as they stand and leaves them there: what is written next goes below them.
        mutating func settle() {
            if !live.isEmpty { redraw() }
            live = []
            drawn = 0
        }

        /// Clears the live lines (the cursor where the first was), for a line to be written in their place.
        mutating func clear() {
            guard drawn > 0 else { return }
            FileHandle.standardError.write(Data("\u{1B}[\(drawn)F\u{1B}[J".utf8))
            drawn = 0
        }
    }
    private let screen = Mutex(Screen())
    /// The warnings given so far (with `--quiet` too), for `--json`'s summary.
    private let warned = Mutex<[String]>([])

    /// A line cut to the terminal's width (less one column), so that it never wraps and the lines redrawn in
    /// place stay where they are.
    private static func fitted(_ line: String) -> String {
        var size = winsize()
        guard ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 1, line.count >= Int(size.ws_col) else {
            return line
        }
        return String(line.prefix(Int(size.ws_col) - 1))
    }

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
        let done = event.isDone
        let unit = event.countedUnit
        if isTerminal {
            let now = Date()
            let started = screen.started[event.stage] ?? now
            screen.started[event.stage] = started
            let line = Self.fitted(event.terminalLine(elapsed: now.timeIntervalSince(started)))
            if let k = screen.live.firstIndex(where: { $0.stage == event.stage }) {
                if screen.live[k].done { return } // a stage that finished and began again keeps its last line
                screen.live[k] = (event.stage, line, done)
            } else {
                screen.live.append((event.stage, line, done))
            }
            guard done || now.timeIntervalSince(screen.lastDraw) >= 0.1 else { return }
            screen.lastDraw = now
            screen.redraw()
        } else {
            let step = event.fraction.map { Int($0 * 10) } ?? (event.completed / 100)
            guard screen.lastStep[event.stage] != step || done else { return }
            if done && screen.lastStep[event.stage] == 10 { return }
            screen.lastStep[event.stage] = done ? 10 : step
            let total = event.total.map { "/\($0)" } ?? ""
            let percent = event.fraction.map { " (\(Int($0 * 100))%)" } ?? ""
            let detail = event.detail.map { ", " + $0 } ?? ""
            FileHandle.standardError.write(
                Data("\(event.stage): \(event.completed)\(total) \(unit)\(percent)\(detail)\n".utf8))
        }
    }

    /// A one-line warning on stderr (not shown with --quiet); on a terminal, above the progress lines.
    func warn(_ message: String) {
        warned.withLock { $0.append(SettingFlags.shown(message)) }
        guard !quiet else { return }
        screen.withLock { s in
            s.clear()
            FileHandle.standardError.write(Data("warning: \(SettingFlags.shown(message))\n".utf8))
            if !s.live.isEmpty { s.redraw() }
        }
    }

    /// An informational line on stderr (not shown with --quiet); on a terminal, above the progress lines.
    func info(_ message: String) {
        guard !quiet else { return }
        screen.withLock { s in
            s.clear()
            FileHandle.standardError.write(Data("\(message)\n".utf8))
            if !s.live.isEmpty { s.redraw() }
        }
    }

    /// The one-line error on stderr (always shown); with `--json`, also as a JSON object on stdout, in place of
    /// the summary: `{"error": {"code": …, "input": …, "message": …, "exit_status": …}}` (`code` one of
    /// ``LapseError/Code``'s names, `input` the file or URL it concerns when there is one, `message` the line
    /// shown on stderr without its `error: `).
    func error(_ message: String, code: String = "other", input: String? = nil, exitStatus: Int32) {
        let message = SettingFlags.shown(message)
        if json {
            // The code in the JSON's style, snake_case as its keys: `invalidInput` is "invalid_input".
            let snake = code.replacing(/[A-Z]/) { "_" + $0.output.lowercased() }
            let object = Summary.ErrorReport(
                error: .init(code: snake, message: message, exitStatus: Int(exitStatus), input: input))
            if let data = try? SummaryJSON.data(object) {
                FileHandle.standardOutput.write(data + Data("\n".utf8))
            }
        }
        screen.withLock { s in
            s.settle()
            FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        }
    }

    /// `object` with the warnings given so far (``WarnedSummary``): what `--json` prints.
    func warned<T: Encodable>(_ object: T) -> WarnedSummary<T> {
        WarnedSummary(base: object, warnings: warned.withLock { $0 })
    }

    /// The final summary: `lines` as text on stdout (stderr with `--json`), and with `--json` `object` as JSON on
    /// stdout (``SummaryJSON``), with the warnings given (``warned(_:)``).
    func summary(_ lines: [String], json object: some Encodable) {
        if json {
            if let data = try? SummaryJSON.data(warned(object)) {
                FileHandle.standardOutput.write(data + Data("\n".utf8))
            }
        }
        guard !quiet else { return }
        screen.withLock { s in
            s.settle()
            // Without --json the summary is the command's result: stdout. With --json, stdout is for JSON only.
            let text = lines.joined(separator: "\n") + "\n"
            if json {
                FileHandle.standardError.write(Data(text.utf8))
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        }
    }
}

/// Human-readable byte counts ("1.4 MB").
func formatBytes(_ n: Int64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB"]
    var v = Double(n)
    var i = 0
    while v >= 1000 && i < units.count - 1 {
        v /= 1000
        i += 1
    }
    return i == 0 ? "\(n) B" : String(format: "%.1f", v) + " " + units[i]
}

/// `n` and a unit given in the plural ("route points", "video frames"), singular for one.
func counted(_ n: Int, plural unit: String) -> String {
    n == 1 && unit.hasSuffix("s") ? "1 \(unit.dropLast())" : "\(n) \(unit)"
}

/// "1 frame", "2 frames": a count and its noun (`plural` when the noun is irregular).
func counted(_ n: Int, _ noun: String, _ plural: String? = nil) -> String {
    "\(n) " + (n == 1 ? noun : plural ?? noun + "s")
}
