// SPDX-License-Identifier: GPL-3.0-or-later
internal import CMalloc
import Foundation
import LapseKit

/// Exit codes, as swift-argument-parser and sysexits.h use them.
enum ExitStatus {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64
    static let interrupted: Int32 = 130
}

/// `  name        summary` for every command.
let commandList = allCommands.map { "  " + $0.name.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.summary }
    .joined(separator: "\n")

let topHelp = """
    lapse \(lapseVersion) — hyperlapses from routes and street-level panoramas, videos from images, clips and GIFs.

    Usage: lapse COMMAND [options]

    Commands:
    \(commandList)

    Options for every command:
      --quiet        no progress, no summary (errors only)
      --json         print a machine-readable summary on stdout
      --help, -h     the command's help
      --version      lapse's version

    Run 'lapse COMMAND --help' for a command's options and examples.
    """

/// Removes the temporary files of unfinished outputs and exits on SIGINT, SIGTERM and SIGHUP.
func installSignalHandlers() -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM, SIGHUP].map { sig in
        signal(sig, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        source.setEventHandler {
            TemporaryFiles.removeAll()
            let status = sig == SIGINT ? ExitStatus.interrupted : 128 + sig
            // Under --json, the error object README promises for every failure, on stdout.
            let options = CommandLine.arguments.dropFirst().prefix { $0 != "--" }
            if options.contains("--json") {
                FileHandle.standardError.write(Data("\n".utf8))
                Console(quiet: true, json: true).error("interrupted", code: "cancelled", exitStatus: status)
            } else {
                FileHandle.standardError.write(Data("\ninterrupted\n".utf8))
            }
            exit(status)
        }
        source.resume()
        return source
    }
}

/// The option named in `help` nearest to `typed` (`--widht` → `--width`), when it is near enough to be a typing
/// slip: at most 2 edits (Levenshtein distance) for names of more than 4 letters, 1 for shorter ones.
func nearestOption(to typed: String, in help: String) -> String? {
    let name = typed.split(separator: "=", maxSplits: 1).first.map(String.init) ?? typed
    let options = Set(help.matches(of: /(?:^|[\s,\[(])(--[a-z][a-z0-9-]*)/).map { String($0.1) })
    return nearestName(to: name, among: options)
}

/// The name among `names` nearest to `name` (`hyperlaps` → `hyperlapse`), by the rule of ``nearestOption(to:in:)``.
func nearestName(to name: String, among options: Set<String>) -> String? {
    func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var diagonal = row[0]
            row[0] = i
            for j in 1...b.count {
                let above = row[j]
                row[j] = min(above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
    let typedLetters = Array(name)
    let best = options.map { ($0, distance(typedLetters, Array($0))) }.min { ($0.1, $0.0) < ($1.1, $1.0) }
    guard let (option, d) = best, d > 0, d <= (name.count > 6 ? 2 : 1) else { return nil }
    return option
}

func runMain() async -> Int32 {
    var tokens = Array(CommandLine.arguments.dropFirst())
    if tokens.isEmpty || tokens == ["--help"] || tokens == ["-h"] || tokens == ["help"] {
        print(topHelp)
        return tokens.isEmpty ? ExitStatus.usage : ExitStatus.success
    }
    // Options end at `--`: what follows is an input even if it is named like one (`-- --help`).
    func given(_ names: String...) -> Bool {
        (tokens.firstIndex(of: "--").map { tokens[..<$0] } ?? tokens[...]).contains { names.contains($0) }
    }
    if given("--version") && !given("--help", "-h") {
        if given("--json") {
            print(#"{"version":"\#(lapseVersion)"}"#)
        } else {
            print("lapse \(lapseVersion)")
        }
        return ExitStatus.success
    }
    // Options for every command may come before it too (`lapse --quiet video …`).
    var global: [String] = []
    while let first = tokens.first, ["--quiet", "-q", "--json"].contains(first) { global.append(tokens.removeFirst()) }
    // No command to run: the error line (and under --json the error object), then what the commands are.
    func commandError(_ message: String) -> Int32 {
        let json = given("--json") || global.contains("--json")
        Console(quiet: false, json: json).error(message, code: "usage", exitStatus: ExitStatus.usage)
        FileHandle.standardError.write(Data("\(topHelp)\n".utf8))
        return ExitStatus.usage
    }
    guard !tokens.isEmpty else { return commandError("no command after \(global.joined(separator: " "))") }
    let name = tokens.removeFirst()
    guard let command = allCommands.first(where: { $0.name == name }) else {
        let names = Set(allCommands.map { $0.name })
        let near = nearestName(to: name, among: names)
        return commandError("unknown command '\(name)'" + (near.map { " (did you mean \($0)?)" } ?? ""))
    }
    if given("--help", "-h") {
        print(command.help)
        return ExitStatus.success
    }
    var arguments = Arguments(global + tokens)
    let console = Console(quiet: arguments.flag("--quiet", "-q"), json: arguments.flag("--json"))
    do {
        try await command.run(&arguments, console: console)
        return ExitStatus.success
    } catch var error as LapseError {
        // Name the file the user asked for, not the temporary file it was being written as.
        if let subject = error.subject, let target = AtomicOutput.targetPath(ofTemporary: subject) {
            error.subject = target
        }
        let status =
            error.code == .usage
            ? ExitStatus.usage : error.code == .cancelled ? ExitStatus.interrupted : ExitStatus.failure
        console.error(
            error.description, code: error.code.description, input: error.subject.map(Redaction.url), exitStatus: status
        )
        if error.code == .usage {
            if let option = error.reason.wholeMatch(of: /unknown option (-[^ ]+)/)?.1,
                let near = nearestOption(to: String(option), in: command.help)
            {
                FileHandle.standardError.write(Data("did you mean \(near)?\n".utf8))
            }
            FileHandle.standardError.write(Data("usage: \(command.usageLine)\n".utf8))
        }
        return status
    } catch {
        console.error(String(describing: error), exitStatus: ExitStatus.failure)
        return ExitStatus.failure
    }
}

// Memory freed stays in the process for the next frame rather than going back to the kernel, to be faulted in and
// zeroed again (x264, the decoders and the frame buffers allocate and free megabytes a frame): glibc's mmap threshold
// fixed at 1 MB (a frame's smaller buffers come from the heap; larger blocks, such as a long route's growing arrays
// or a stitched panorama's planes, are mapped and unmapped whole, so they leave no holes) and its trim threshold at
// 1 GB (mallopt(3)). A hyperlapse of a 360° video spends half the system time it did with glibc's defaults
// (bench/hyperlapse-video.sh, `time`'s system seconds), with the same peak memory; at 32 MB a 150 000-point GPX's
// peak grew by 13 MB, and at 4 MB the 2 MB chroma planes of Street View canvases, left in the heap, made the peak of
// 1000 panoramas 21 % above that of 100 (bench/hyperlapse.sh). At 1 MB the other benches run in the same time, once
// the projection tables a stabilised hyperlapse makes a frame keep their own memory for the next (TableMemory):
// mapped anew, they cost a stabilised 360° video about 0.3 s more system time (bench/stabilize.sh).
_ = mallopt(M_MMAP_THRESHOLD, 1 << 20)
_ = mallopt(M_TRIM_THRESHOLD, 1 << 30)

// FFmpeg's own messages, to diagnose: LAPSE_FFMPEG_LOG=warning (the library reads no environment itself).
if let level = ProcessInfo.processInfo.environment["LAPSE_FFMPEG_LOG"], !MediaInput.showLibraryLog(level: level) {
    FileHandle.standardError.write(
        Data("warning: LAPSE_FFMPEG_LOG=\(level) is not quiet, error, warning, info, verbose or debug\n".utf8))
}

let signalSources = installSignalHandlers()
let status = await runMain()
withExtendedLifetime(signalSources) {}
exit(status)
