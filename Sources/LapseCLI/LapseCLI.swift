// SPDX-License-Identifier: GPL-3.0-or-later
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
public func installSignalHandlers() -> [any DispatchSourceSignal] {
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

/// Runs `lapse` on `arguments` (the words after the program's name): parses them, runs the command, prints its
/// summary, warnings and errors, and returns the exit status (0, 1 for a runtime error, 64 for a usage error, 130
/// when cancelled). What the executable's `main` calls; tests call it in-process.
public func runMain(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) async -> Int32 {
    var tokens = arguments
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
    let console = Console(quiet: arguments.flag(GlobalOptions.quiet), json: arguments.flag(GlobalOptions.json))
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
