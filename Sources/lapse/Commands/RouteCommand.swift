// SPDX-License-Identifier: GPL-3.0-or-later
import LapseKit

enum RouteCommand: Command {
    static let name = "route"
    static let summary = "Plan a route or read a route file, resampled every N metres (not yet built)"
    static let help = """
        lapse route [options]

        Plan a route or read a route file, resampled every N metres (not yet built)
        """
    static func run(_ arguments: inout Arguments, console: Console) async throws {
        throw LapseError(.other, nil, "lapse route is not built yet")
    }
}
