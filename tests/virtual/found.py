"""The fault schedules that found bugs (tests/virtual/test_fault_schedules.py), kept and
run again each time; the game numbers are those of ../shared/data/games."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Fault:
    """A fault at ``share`` of the play (0..1), lasting ``seconds`` where it lasts."""

    kind: str
    share: float
    seconds: float


@dataclasses.dataclass(frozen=True)
class Schedule:
    game: int
    seed: int
    speed: float
    mode23: bool
    rotate: bool
    right: bool
    faults: tuple[Fault, ...]
    latency: float = 0.0  # how late the daemon's commands reach the board (a busy computer)
    memory: int | None = None  # the board's memory in bytes, if not a DGT board's 7,936


#: Schedules that found bugs, kept (the numbers are those of ../shared/data/games).
FOUND = {
    # a reply pressed while the owed time was being paid: the clock ran the wrong side
    "reply during the pay": Schedule(
        game=2,
        seed=29475,
        speed=5.0,
        mode23=True,
        rotate=True,
        right=False,
        faults=(
            Fault(kind="cable", share=0.177241900591947, seconds=4.083713983031708),
            Fault(kind="read", share=0.1991711533117949, seconds=18.817202215418945),
            Fault(kind="read", share=0.07337412633666529, seconds=5.626401006799384),
            Fault(kind="read", share=0.30168168935856887, seconds=7.572425666390946),
        ),
    ),
    # a kill during the backlog, before the pay: the owed time was lost
    "kill before the pay": Schedule(
        game=6,
        seed=16005,
        speed=5.0,
        mode23=True,
        rotate=False,
        right=False,
        faults=(
            Fault(kind="duplicate", share=0.8119430770112224, seconds=11.410394990592982),
            Fault(kind="cable", share=0.266962094651883, seconds=1.0),
            Fault(kind="kill", share=0.9545925663442376, seconds=9.352136743095103),
        ),
    ),
    # a torn update hid a move whose press came first: a later press's time stood until
    # the memory read after the restart gave the ply its own
    "torn update, then a restart": Schedule(
        game=6,
        seed=42710,
        speed=1.5,
        mode23=False,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="cable", share=0.05444968137184791, seconds=19.85832401343558),
            Fault(kind="torn_update", share=0.11498448813031215, seconds=7.376611526542466),
            Fault(kind="kill", share=0.8601807567228166, seconds=17.685682273876573),
            Fault(kind="duplicate", share=0.4409560649493458, seconds=14.363906068725521),
        ),
    ),
    # a lost update hid the king of a castling made rook first: the rook's move took the
    # press, and the castling that replaced it a later one
    "castling's press kept by its correction": Schedule(
        game=8,
        seed=17485,
        speed=1.5,
        mode23=True,
        rotate=True,
        right=False,
        faults=(Fault(kind="lost_update", share=0.14835499413404984, seconds=14.057601736497206),),
    ),
    # Black's press for a move its lost updates hid was dropped when White pressed: Black's
    # move took its next press, White's its own a move late
    "a press held for a move not seen yet": Schedule(
        game=9,
        seed=7442,
        speed=2.0,
        mode23=True,
        rotate=True,
        right=False,
        faults=(
            Fault(kind="cable", share=0.015709900553161793, seconds=16.5939442603813),
            Fault(kind="lost_update", share=0.21960874760198212, seconds=3.145639898649445),
        ),
    ),
    # a heal: the clock set after Black's press reset what White's logged time lacked, and
    # White's next press looked like a clock adding its own time
    "a heal's setting and the other side's time": Schedule(
        game=7,
        seed=18544,
        speed=5.0,
        mode23=True,
        rotate=True,
        right=False,
        faults=(
            Fault(kind="lost_update", share=0.1777811906968635, seconds=7.811270843668317),
            Fault(kind="read", share=0.6345095850067237, seconds=12.868304366103407),
            Fault(kind="cable", share=0.5536441130326073, seconds=9.015028721887404),
            Fault(kind="lost_update", share=0.6256813585705415, seconds=18.961645711262122),
        ),
    ),
    # presses followed live while a lost update hid their moves, then the cable: the
    # memory read after it took dgtcast's settings for a clock adding its own time
    "presses followed live, then the cable": Schedule(
        game=1,
        seed=38557,
        speed=3.0,
        mode23=True,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="cable", share=0.7147444697321964, seconds=11.566412156143524),
            Fault(kind="lost_update", share=0.6009602841210302, seconds=4.18460855413273),
            Fault(kind="cable", share=0.5403436877556778, seconds=4.651974784545079),
            Fault(kind="torn_update", share=0.3077907503707641, seconds=10.861122701485602),
        ),
    ),
    # both field updates of White's move lost: its press came on a still board and was
    # dropped when Black pressed for the reply, so White's move took its next press
    "a move none of whose updates came": Schedule(
        game=2,
        seed=53093,
        speed=5.0,
        mode23=True,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="lost_update", share=0.2056311928949095, seconds=6.086014268656968),
            Fault(kind="lost_update", share=0.21636390582817577, seconds=6.047976241074322),
        ),
    ),
    # the lift of a knight lost: with the phantom knight Nf5 Bxf5 read as g6 Bf5; the
    # whole read showed the board out of sync, but the memory read could not anchor on a
    # line the board never played
    "a phantom piece's line replaced from the memory": Schedule(
        game=8,
        seed=35525,
        speed=5.0,
        mode23=True,
        rotate=False,
        right=False,
        faults=(
            Fault(kind="duplicate", share=0.47397602575962994, seconds=14.594844280439373),
            Fault(kind="duplicate", share=0.7452161297692185, seconds=9.549034066042173),
            Fault(kind="cable", share=0.419668507056832, seconds=16.30687023671102),
            Fault(kind="lost_update", share=0.7333153802765507, seconds=8.792815243028478),
        ),
    ),
    # queenside castling rook first, read up to the rook in a heal: Rd1 stood, the king's
    # arrival then matched nothing the memory could anchor on
    "a castling the heal cut in two": Schedule(
        game=4,
        seed=43316,
        speed=1.5,
        mode23=False,
        rotate=True,
        right=False,
        faults=(
            Fault(kind="lost_update", share=0.26883421244984596, seconds=4.676091073244235),
            Fault(kind="duplicate", share=0.7022088773508097, seconds=2.24738204780392),
            Fault(kind="lost_update", share=0.6408262326947233, seconds=12.752812776113382),
            Fault(kind="lost_update", share=0.9100960080730557, seconds=15.39361721916302),
        ),
    ),
    # one field update lost and the next torn while the memory was read: Black's h6
    # never showed, its other moves were read a ply early, and the whole read after
    # the backlog fitted them as h6 later on (never out of sync)
    "a move unseen, the others read early": Schedule(
        game=9,
        seed=42643,
        speed=5.0,
        mode23=True,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="lost_update", share=0.37796883434360806, seconds=7.591686806689812),
            Fault(kind="torn_update", share=0.5733827030223086, seconds=18.034749174312147),
            Fault(kind="read", share=0.1941186449851896, seconds=2.984060233988791),
            Fault(kind="cable", share=0.29607267308315155, seconds=10.49619852249923),
        ),
    ),
    # the same with White's moves, on a clock that adds its own time
    "two moves swapped, never out of sync": Schedule(
        game=5,
        seed=7972,
        speed=3.0,
        mode23=False,
        rotate=False,
        right=True,
        faults=(
            Fault(kind="torn_update", share=0.4709956299502015, seconds=13.342660352465641),
            Fault(kind="cable", share=0.33294231233867544, seconds=16.995288173459446),
            Fault(kind="kill", share=0.9349109190395866, seconds=18.627665616998083),
            Fault(kind="lost_update", share=0.3872397833406712, seconds=10.664978772879808),
        ),
    ),
    # a memory read cut by the cable: the gap search guessed moves
    "read cut by the cable": Schedule(
        game=8,
        seed=2415,
        speed=3.0,
        mode23=True,
        rotate=False,
        right=True,
        faults=(
            Fault(kind="cable", share=0.75, seconds=10.465457478682348),
            Fault(kind="cable", share=0.5091005019270319, seconds=8.685893667044855),
            Fault(kind="cable", share=0.0, seconds=3.6822733579351965),
            Fault(kind="read", share=0.8644118454979381, seconds=15.022531214402468),
        ),
    ),
    # both field updates of White's first move lost: its press, on the start position,
    # was taken for one that starts the clock, Black's then for White's; the sides were
    # learnt the wrong way round (every [%clk] to the other colour, and a start check
    # of the wrong colours) until the memory read told them
    "White's first move unseen, its press taken to start the clock": Schedule(
        game=2,
        seed=382,
        speed=3.0,
        mode23=False,
        rotate=False,
        right=False,
        faults=(
            Fault(kind="torn_update", share=0.0, seconds=5.005596282823106),
            Fault(kind="torn_update", share=0.0, seconds=10.036764701350085),
        ),
    ),
    # the same on a mode 23 clock: the press then gained no increment, which the
    # memory's replay of the game from its start did not give move 1 either
    "White's first move unseen on a mode 23 clock": Schedule(
        game=6,
        seed=365,
        speed=2.0,
        mode23=True,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="lost_update", share=0.0, seconds=17.669756509649478),
            Fault(kind="lost_update", share=0.0, seconds=17.669756509649478),
            Fault(kind="lost_update", share=0.0, seconds=17.669756509649478),
        ),
    ),  # the updates of Qe1 lost while the memory was read: the queen's phantom on d1 read
    # as Qd1 a3 Qe1 for a3 Nh4 Nf3, the very position the board showed; the memory read
    # to check the moves anchored on that position, the line 8 plies back unchecked
    "a phantom line ending where the game does": Schedule(
        game=0,
        seed=206,
        speed=5.0,
        mode23=False,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="cable", share=8.328289683725102e-199, seconds=19.0),
            Fault(kind="lost_update", share=0.0, seconds=1.9),
            Fault(kind="lost_update", share=0.4809528100479429, seconds=4.6291735463119466),
            Fault(kind="lost_update", share=0.4809528100479429, seconds=4.6291735463119466),
        ),
        latency=0.1,
    ),  # White's first move and Black's reply unseen on a mode 23 clock: the press of each
    # taken to start the clock, each later move took the press after its own, and the
    # SETNRUNs never gave the first two increments; the memory read took the game up
    # where the log completes move 2, with presses of the ledger two moves on
    "each move a press late on a mode 23 clock": Schedule(
        game=7,
        seed=5,
        speed=5.0,
        mode23=True,
        rotate=False,
        right=True,
        faults=(
            Fault(kind="torn_update", share=6.39798534544964e-104, seconds=12.472678713000544),
            Fault(kind="lost_update", share=2.8428997482002603e-61, seconds=11.522093638764387),
            Fault(kind="lost_update", share=2.8428997482002603e-61, seconds=11.522093638764387),
            Fault(kind="lost_update", share=2.8428997482002603e-61, seconds=11.522093638764387),
        ),
        latency=0.1,
    ),  # White's first lift lost on a mode 23 clock: Black's first press came while the
    # game still stood at its start in dgtcast's eyes and earned nothing, and no memory
    # read replayed it; the clock lacked Black's first increment for good
    "Black's first press earning nothing": Schedule(
        game=8,
        seed=49040,
        speed=5.0,
        mode23=True,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="cable", share=0.5974382473942838, seconds=6.688004195421355),
            Fault(kind="cable", share=0.5974382473942838, seconds=6.688004195421355),
            Fault(kind="cable", share=0.5974382473942838, seconds=6.688004195421355),
            Fault(kind="lost_update", share=1.175494351e-38, seconds=1.9),
        ),
        latency=0.1,
    ),
    # the cable from the start, the memory read while play went on: the SETNRUN that
    # carried out White's press undone by a late one set Black running, and Black's move
    # on its way, dgtcast carried out Black's press too before it came; the truth had a
    # SETNRUN pay only presses made before it was sent, and Black's increment looked lost
    "a press paid before it came": Schedule(
        game=7,
        seed=65535,
        speed=5.0,
        mode23=True,
        rotate=False,
        right=False,
        faults=(
            Fault(kind="cable", share=1e-09, seconds=9.17794248967013),
            Fault(kind="cable", share=0.7119961210145259, seconds=2.00001),
            Fault(kind="torn_update", share=0.5222917114289333, seconds=11.0436942956907),
        ),
        latency=0.1,
    ),
    # White's first press answered, the cable pulled while the SETNRUN was on its way:
    # the clock never took it, but dgtcast counted White's increment as given, and the
    # memory read after the cable owed White only the presses of the log (White 10 s
    # short for good); the log's times show the clock could not have spent so much
    "a SETNRUN lost with the cable": Schedule(
        game=9,
        seed=4036,
        speed=2.0,
        mode23=True,
        rotate=False,
        right=False,
        faults=(
            Fault(kind="duplicate", share=0.46789036440476683, seconds=1.7389081866874996),
            Fault(kind="cable", share=0.018789668524855866, seconds=6.5886354407317755),
            Fault(kind="kill", share=0.4073629939937694, seconds=4.197981543727041),
            Fault(kind="duplicate", share=0.19834481676068255, seconds=19.75871386734168),
        ),
        latency=0.1,
    ),
    # White's press answered, the cable pulled while the SETNRUN was on its way and back
    # before White's next press: the log read after it had no press of White's since, so
    # the clock was taken to have the SETNRUN; White's next [%clk] 10 s short
    "a SETNRUN lost with the cable, its side standing": Schedule(
        game=6,
        seed=163,
        speed=3.0,
        mode23=True,
        rotate=False,
        right=True,
        faults=(Fault(kind="cable", share=0.33209593715821356, seconds=2.9922660122941296),),
        latency=0.25,
    ),
    # White's increment given, the daemon killed before a reading confirmed it; after the
    # restart a reading showed White standing below the time set, after White had run
    # and pressed again: taken for a SETNRUN the clock never had, White given 10 s twice
    "a SETNRUN doubted after a kill, its side pressed since": Schedule(
        game=9,
        seed=19211,
        speed=1.5,
        mode23=True,
        rotate=False,
        right=False,
        faults=(
            Fault(kind="kill", share=0.02, seconds=10.439235334366392),
            Fault(kind="lost_update", share=0.5847441556544769, seconds=1.9),
            Fault(kind="read", share=0.9999999999999999, seconds=3.907118248898454),
            Fault(kind="kill", share=0.8106216285256294, seconds=4.80954485654587),
        ),
    ),
    # a memory of 256 bytes that wrapped: the placement searched after a restart showed
    # Black's queen in the air (Qxh4 half made), and lines that took it off the board
    # were offered; Qxh4 then matched, and their alert stayed open
    "candidates from a piece in the air": Schedule(
        game=1,
        seed=3296,
        speed=1.5,
        mode23=False,
        rotate=False,
        right=True,
        faults=(
            Fault(kind="kill", share=0.9889444668862877, seconds=1.5),
            Fault(kind="read", share=0.75, seconds=3.6094753044117307),
            Fault(kind="kill", share=0.46279737026286927, seconds=4.836563603034306),
        ),
        memory=256,
    ),
    # a lost reading at White's first press, Black's reply within the second: the clock
    # showed White running before and after, both presses hidden; Black's time had gained
    # its increment while it did not run (a Fischer clock): a clock_mismatch left open
    "two presses hidden at the start": Schedule(
        game=2,
        seed=11955,
        speed=3.0,
        mode23=False,
        rotate=False,
        right=False,
        faults=(
            Fault(kind="lost_clock", share=0.9, seconds=7.526674618664607),
            Fault(kind="torn_update", share=1.3899858829383026e-213, seconds=6.9712287356389675),
            Fault(kind="lost_clock", share=0.9, seconds=7.526674618664607),
            Fault(kind="lost_clock", share=0.0, seconds=7.526674618664607),
        ),
        latency=0.02,
    ),
    # four readings lost in a row over White's press and Black's reply (mode 23): White
    # ran before and after, Black's time 2 s lower; neither press was paid, and the
    # memory read of the board out of sync left four [%clk] off
    "two presses hidden among four lost readings": Schedule(
        game=8,
        seed=1306,
        speed=5.0,
        mode23=True,
        rotate=False,
        right=False,
        faults=(Fault(kind="lost_clock", share=0.6021372529952652, seconds=15.750613798638268),)
        * 4,
        latency=0.1,
    ),
    # two readings lost at the start of a mode 23 game: White's first press and Black's
    # reply hidden, told again from Black's time that ran; the game had not taken White's
    # press yet, so Black's press counted as one that starts the clock: Black's 10 s unpaid
    "the reply to a hidden first press": Schedule(
        game=9,
        seed=303,
        speed=3.0,
        mode23=True,
        rotate=False,
        right=False,
        faults=(Fault(kind="lost_clock", share=0.0, seconds=17.16863855436555),) * 2,
        latency=0.25,
    ),
    # two ticks lost before a press: the reading before it was 2 s old, and the gain
    # measured from it 2 s short of the increment: a clock_mismatch raised and left open
    "a press measured from a reading 2 s old": Schedule(
        game=9,
        seed=3057,
        speed=1.5,
        mode23=True,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="lost_clock", share=0.9134870487613118, seconds=8.806237612384784),
            Fault(kind="lost_clock", share=0.8, seconds=4.155283986077809),
            Fault(kind="lost_clock", share=0.5, seconds=1.0),
            Fault(kind="lost_clock", share=0.9134870487613118, seconds=8.806237612384784),
        ),
        latency=0.02,
    ),
    # mode 23: White's first press and Black's reply within the second, no reading
    # showing either (no time changed); White's next press, seen, was taken for its
    # first move, and the memory read after a torn update followed the ledger's press in
    # the log's order: ply 1 got White's second press's time, ply 3 lacked 10 s
    "two presses no reading showed, at the start": Schedule(
        game=2,
        seed=11955,
        speed=3.0,
        mode23=True,
        rotate=False,
        right=False,
        faults=(
            Fault(kind="lost_clock", share=0.0, seconds=7.526674618664607),
            Fault(kind="torn_update", share=1.3899858829383026e-213, seconds=6.9712287356389675),
            Fault(kind="lost_clock", share=0.9, seconds=7.526674618664607),
            Fault(kind="lost_clock", share=0.0, seconds=7.526674618664607),
        ),
        latency=0.02,
    ),
    # the same mid-game (mode 23): the board went out of sync, and the memory read to
    # heal it gave the hidden presses no increment, or one a setting had already given
    "two presses no reading showed, mid-game": Schedule(
        game=8,
        seed=65536,
        speed=5.0,
        mode23=True,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="lost_clock", share=0.5233767452345296, seconds=1.0000000000000002),
            Fault(kind="lost_clock", share=0.480866642139853, seconds=3.113175981902751),
            Fault(kind="lost_clock", share=0.0, seconds=12.325471312217735),
            Fault(kind="lost_clock", share=0.410381389887963, seconds=8.476769089854049),
        ),
    ),
    # the same at the start of a Chess960 game on a mode 23 clock, White's next press a
    # second after the hidden pair: the time the session recorded for it was within a
    # second of an increment over White's hidden press too
    "two presses no reading showed, a second before the next": Schedule(
        game=9,
        seed=4591,
        speed=5.0,
        mode23=True,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="lost_clock", share=0.04352883148679299, seconds=19.0),
            Fault(kind="lost_clock", share=2.225073858507203e-309, seconds=13.073142376257515),
        ),
    ),
    # lost field updates at the start and the cable: the board's own line transposed two
    # moves and ended in mate; the memory read that checked the moves withdrew six plies
    # of a game already over and could not play them again (the record 4 plies long)
    "a mate of the board's own line withdrawn": Schedule(
        game=6,
        seed=5183,
        speed=3.0,
        mode23=True,
        rotate=True,
        right=False,
        faults=(
            Fault(kind="lost_update", share=0.23582860604957162, seconds=2.086128885353797),
            Fault(kind="cable", share=0.0, seconds=11.16453510797911),
            Fault(kind="lost_update", share=3.931733269139651e-28, seconds=11.000487867228642),
        ),
        latency=0.02,
    ),
    # kills, the cable and a lost field update on a mode 23 clock: the presses made while
    # the daemon was down are not in its ledger, and a later pair of presses fitted the
    # ledger's next two better than the press at its place: taken for a hidden pair, a
    # [%clk] 7 s over
    "presses made while nobody listened are no hidden pair": Schedule(
        game=4,
        seed=396,
        speed=1.5,
        mode23=True,
        rotate=False,
        right=True,
        faults=(
            Fault(kind="cable", share=0.4427118109116338, seconds=5.079769833448327),
            Fault(kind="kill", share=0.17877152507103647, seconds=6.530193349134483),
            Fault(kind="lost_update", share=0.0, seconds=17.953910585100868),
            Fault(kind="kill", share=0.5, seconds=8.432813320364176),
        ),
    ),
    # White's first move unseen (its updates lost), its press taken for one starting the
    # clock: the sides were learnt the wrong way round, and the memory read after a kill
    # and the cable, with no move recorded yet, kept them: every [%clk] a press late
    "the sides learnt wrong before any move": Schedule(
        game=6,
        seed=40,
        speed=5.0,
        mode23=False,
        rotate=False,
        right=False,
        faults=(
            Fault(kind="kill", share=0.1211818064100543, seconds=2.0),
            Fault(kind="lost_update", share=0.0, seconds=14.522213229426338),
            Fault(kind="cable", share=0.5981182986565287, seconds=6.034804630400462),
            Fault(kind="lost_update", share=0.0, seconds=14.522213229426338),
        ),
        latency=0.1,
    ),
    # the same faults in Chess960 on a mode 23 clock: Nb3's updates lost, the placement
    # after Nb3 Nb6 d4 was read as d4 Nb6 with Nb3 on its way; the memory read after the
    # kill anchored on that placement and kept the other line (a kill then the cable)
    "another line to the placement the board showed": Schedule(
        game=9,
        seed=40,
        speed=5.0,
        mode23=True,
        rotate=False,
        right=False,
        faults=(
            Fault(kind="kill", share=0.1211818064100543, seconds=2.0),
            Fault(kind="lost_update", share=0.0, seconds=14.522213229426338),
            Fault(kind="cable", share=0.5981182986565287, seconds=6.034804630400462),
            Fault(kind="lost_update", share=0.0, seconds=14.522213229426338),
        ),
        latency=0.1,
    ),
    # a pair of presses hidden by a lost reading (mode 23, no time changed) after plies an
    # earlier read made: the heal's check of the presses compared the ledger's first
    # press, made after those plies, with the log's first, found no hidden pair, and the
    # increments of the pair stayed ungiven (two plies' [%clk] 10 s short)
    "a hidden pair after plies a read made": Schedule(
        game=8,
        seed=2312,
        speed=5.0,
        mode23=True,
        rotate=True,
        right=False,
        faults=(
            Fault(kind="lost_clock", share=0.12026037109259649, seconds=8.251306969631601),
            Fault(kind="cable", share=0.0, seconds=2.9949783214699157),
            Fault(kind="lost_clock", share=0.7906428972853772, seconds=1.1886865762014138),
        ),
        latency=0.02,
    ),
    # the game's last two presses hidden by lost readings (mode 23, no time changed):
    # the moves completed with no press and nothing read the memory after them, so their
    # increments were never given (the last plies' [%clk] and the clock 10 s short)
    "the last presses hidden, no read after": Schedule(
        game=8,
        seed=304,
        speed=5.0,
        mode23=True,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="lost_clock", share=0.880316235290056, seconds=12.078333178532212),
            Fault(kind="lost_clock", share=0.9695370553516394, seconds=12.078333178532212),
            Fault(kind="lost_clock", share=0.9695370553516394, seconds=12.078333178532212),
            Fault(kind="lost_clock", share=0.880316235290056, seconds=12.078333178532212),
        ),
    ),
    # the cable pulled while the SETNRUN of Black's press was on its way (0.25 s late)
    # and out for 19 s, both sides pressing meanwhile: the log's times allowed both, the
    # clock was taken to have it, and Black's replayed plies were 10 s short; the
    # reading held during the memory read tells by the time passed
    "a SETNRUN cut, a long outage": Schedule(
        game=8,
        seed=536,
        speed=5.0,
        mode23=True,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="cable", share=0.7800110820727952, seconds=19.0),
            Fault(kind="torn_update", share=0.021043950459043174, seconds=9.78942666168271),
            Fault(kind="torn_update", share=0.021043950459043174, seconds=9.78942666168271),
            Fault(kind="cable", share=0.23130428490016636, seconds=1.0),
        ),
        latency=0.25,
    ),
    # White's first move unseen, its press taken to start the clock: Black's move was
    # then made with no press read (its press went to White's), the ledger holding as
    # many presses as the log; an unread press must not be made of it (found while the
    # read for unread presses was written: Black's [%clk] 10 s long)
    "a move with no press, its press taken for the one before": Schedule(
        game=9,
        seed=24,
        speed=1.5,
        mode23=True,
        rotate=False,
        right=False,
        faults=(
            Fault(kind="lost_update", share=2.2250738585072014e-308, seconds=11.187292159948333),
            Fault(kind="torn_update", share=0.6647305999888188, seconds=1.0),
            Fault(kind="lost_update", share=2.2250738585e-313, seconds=19.931413716917284),
        ),
        latency=0.02,
    ),
}
