// SPDX-License-Identifier: GPL-3.0-or-later
import LapseKit

/// One `lapse` subcommand: its help text and how it runs.
protocol Command: Sendable {
    /// The word after `lapse`.
    static var name: String { get }
    /// One line for `lapse --help`.
    static var summary: String { get }
    /// The full `--help` text; its first line is the usage line (printed with usage errors).
    static var help: String { get }
    /// Runs the command. Options common to all commands (`--quiet`, `--json`) are already taken out.
    /// Throws ``LapseError`` (code `.usage` for usage errors).
    static func run(_ arguments: inout Arguments, console: Console) async throws
}

extension Command {
    static var usageLine: String { help.split(separator: "\n").first.map(String.init) ?? "lapse \(name)" }
}

/// Every subcommand, in the order `lapse --help` lists them.
let allCommands: [any Command.Type] = [
    HyperlapseCommand.self,
    PreviewCommand.self,
    RouteCommand.self,
    PanoramasCommand.self,
    ViewCommand.self,
    VideoCommand.self,
    ClipCommand.self,
    GIFCommand.self,
    ConcatCommand.self
]
