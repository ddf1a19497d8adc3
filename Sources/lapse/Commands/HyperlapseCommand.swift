// SPDX-License-Identifier: GPL-3.0-or-later
import LapseKit

enum HyperlapseCommand: Command {
    static let name = "hyperlapse"
    static let summary = "Make a hyperlapse video from a route and street-level panoramas (not yet built)"
    static let help = """
        lapse hyperlapse [options]

        Make a hyperlapse video from a route and street-level panoramas (not yet built)
        """
    static func run(_ arguments: inout Arguments, console: Console) async throws {
        throw LapseError(.other, nil, "lapse hyperlapse is not built yet")
    }
}
