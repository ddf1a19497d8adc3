// SPDX-License-Identifier: GPL-3.0-or-later
import LapseKit

enum GIFCommand: Command {
    static let name = "gif"
    static let summary = "Make an animated GIF from a video or images (not yet built)"
    static let help = """
        lapse gif [options]

        Make an animated GIF from a video or images (not yet built)
        """
    static func run(_ arguments: inout Arguments, console: Console) async throws {
        throw LapseError(.other, nil, "lapse gif is not built yet")
    }
}
