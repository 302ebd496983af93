//! Many clients at once, each taking IDs from a generator the way an
//! application does: `SELECT <prefix>_next_id()` and `INSERT ... DEFAULT`,
//! each statement a transaction of its own, one in ten rolled back; and what
//! every ID they got must show, and that the clients ran at once.

use snowflake::Layout;

use crate::db::{Db, Place, snowflake};
use crate::support::Printed;

/// How a statement took its ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    Select,
    Insert,
}

/// One ID a client got, the database clock read just before and just after
/// it in the same statement, and how.
#[derive(Debug, Clone, Copy)]
pub struct Taken {
    /// The ID as the database's bigint holds it.
    pub id: i64,
    pub before_ms: i64,
    pub after_ms: i64,
    pub way: Way,
    pub rolled_back: bool,
}

/// Clients taking IDs from one generator, into one table.
#[derive(Debug)]
pub struct Load<'a> {
    pub place: Place,
    /// `<prefix>_next_id`.
    pub function: &'a str,
    /// A table whose `id` the generator fills, made by [`Load::create_table`].
    pub table: &'a str,
    pub clients: usize,
    pub ids_each: usize,
}

impl Load<'_> {
    /// The table whose `id` the generator fills: by a column default in
    /// PostgreSQL, by a trigger in MariaDB, as the script's comment says.
    /// `before_ms` comes first: an insert computes its columns in order, so
    /// it is the clock before the ID was made.
    pub fn create_table(&self) {
        let (t, f) = (self.table, self.function);
        let sql = match self.place.db {
            Db::Postgres => format!(
                "DROP TABLE IF EXISTS {t};\n\
                 CREATE TABLE {t} (before_ms bigint NOT NULL, \
                 id bigint PRIMARY KEY DEFAULT {f}(), client int NOT NULL);\n"
            ),
            Db::Mariadb => format!(
                "DROP TABLE IF EXISTS {t};\n\
                 CREATE TABLE {t} (before_ms BIGINT NOT NULL, \
                 id BIGINT NOT NULL DEFAULT 0 PRIMARY KEY, client INT NOT NULL);\n\
                 CREATE TRIGGER {t}_id BEFORE INSERT ON {t} FOR EACH ROW\n\
                 \x20 SET NEW.id = IF(NEW.id = 0, {f}(), NEW.id);\n"
            ),
        };
        self.place.run(&sql).unwrap();
    }

    /// The statement that takes one ID and returns it between the clock
    /// before and after, and a mark of how it was taken (upper case: rolled
    /// back). A select list is computed in order.
    fn statement(&self, client: usize, way: Way, rolled_back: bool) -> String {
        let clock = self.place.db.clock_ms();
        let mark = match (way, rolled_back) {
            (Way::Select, false) => "s",
            (Way::Select, true) => "S",
            (Way::Insert, false) => "i",
            (Way::Insert, true) => "I",
        };
        let statement = match way {
            Way::Select => format!("SELECT {clock}, {}(), {clock}, '{mark}';", self.function),
            Way::Insert => format!(
                "INSERT INTO {} (before_ms, id, client) VALUES ({clock}, DEFAULT, {client}) \
                 RETURNING before_ms, id, {clock}, '{mark}';",
                self.table
            ),
        };
        match rolled_back {
            true => format!("START TRANSACTION;\n{statement}\nROLLBACK;\n"),
            false => format!("{statement}\n"),
        }
    }

    /// Runs the clients at once; each one's IDs in the order it got them.
    pub fn run(&self) -> Vec<Vec<Taken>> {
        let scripts: Vec<String> = (0..self.clients)
            .map(|client| {
                (0..self.ids_each)
                    .map(|i| {
                        let way = if i % 2 == 0 { Way::Select } else { Way::Insert };
                        self.statement(client, way, i % 10 >= 8)
                    })
                    .collect()
            })
            .collect();
        self.place
            .clients(&scripts)
            .into_iter()
            .enumerate()
            .map(|(client, out)| {
                let out = out.unwrap_or_else(|err| panic!("client {client} failed: {err}"));
                out.lines().map(parse).collect()
            })
            .collect()
    }

    /// Everything the IDs must show; `layout` is how `snowflake decode`
    /// is told the layout, `node` the generator's node values.
    pub fn check(&self, taken: &[Vec<Taken>], layout: &[&str], node: &[(&str, u64)]) {
        let at_once = AtOnce::of(taken);
        // The report of how the clients ran, shown with --nocapture.
        #[allow(clippy::print_stdout)]
        {
            println!("{:?}, {} clients: {at_once}", self.place.db, self.clients);
        }
        assert_eq!(at_once.most, self.clients, "{at_once}");
        // A client that waits for its output to be read stops until the
        // clients before it are done: a pause of most of the run. A busy
        // machine can hold one up for a moment, never for seconds.
        assert!(
            at_once.longest_pause_ms < (at_once.whole_ms / 4).max(LONGEST_PAUSE_MS),
            "{at_once}; spans {:?}",
            at_once.spans
        );
        let tick_ms = core_layout(layout).tick_ms() as i64;
        for (client, ids) in taken.iter().enumerate() {
            assert_eq!(ids.len(), self.ids_each, "client {client}'s IDs");
            for pair in ids.windows(2) {
                assert!(
                    (pair[0].id as u64) < (pair[1].id as u64),
                    "client {client} got {} after {}",
                    pair[1].id,
                    pair[0].id
                );
            }
        }
        let all: Vec<Taken> = taken.iter().flatten().copied().collect();
        assert_no_duplicates(&all);
        for way in [Way::Select, Way::Insert] {
            for rolled_back in [false, true] {
                assert!(
                    all.iter()
                        .any(|t| t.way == way && t.rolled_back == rolled_back),
                    "some {way:?} with rolled_back {rolled_back}"
                );
            }
        }
        let decoded = decode(layout, &all);
        let mut lines = decoded.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
        let time_column = column("timestamp_ms");
        let node_columns: Vec<(usize, String)> = node
            .iter()
            .map(|(name, value)| (column(name), value.to_string()))
            .collect();
        let mut count = 0;
        for (t, line) in all.iter().zip(lines) {
            let row: Vec<&str> = line.split(',').collect();
            let time: i64 = row[time_column].parse().unwrap();
            // The ID's time is its tick's start, and the tick is the one
            // the clock read in the call: no earlier than the tick of the
            // clock read before the call, no later than the clock read
            // after it, in the same statement. A bound with no slack: a
            // busy machine can make a statement long, never this wrong.
            assert!(
                time > t.before_ms - tick_ms && time <= t.after_ms,
                "ID {} has the time {time}, the database clock read {} before it and {} after",
                t.id,
                t.before_ms,
                t.after_ms
            );
            for (i, value) in &node_columns {
                assert_eq!(row[*i], value, "{} of {}", header[*i], t.id);
            }
            count += 1;
        }
        assert_eq!(count, all.len(), "every ID decoded");
        // Exactly the committed inserts are in the table.
        let mut inserted: Vec<i64> = all
            .iter()
            .filter(|t| t.way == Way::Insert && !t.rolled_back)
            .map(|t| t.id)
            .collect();
        inserted.sort_unstable();
        let rows = self
            .place
            .run(&format!("SELECT id FROM {} ORDER BY id;", self.table))
            .unwrap();
        let rows: Vec<i64> = rows.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(rows.len(), inserted.len(), "rows in {}", self.table);
        assert!(
            rows == inserted,
            "the rows of {} are the committed inserts",
            self.table
        );
    }
}

fn parse(line: &str) -> Taken {
    let cols: Vec<&str> = line.split('\t').collect();
    let [before, id, after, mark] = cols[..] else {
        panic!("not a clock, an ID, a clock and a mark: {line:?}");
    };
    Taken {
        id: id.parse().unwrap(),
        before_ms: before.parse().unwrap(),
        after_ms: after.parse().unwrap(),
        way: match mark {
            "s" | "S" => Way::Select,
            _ => Way::Insert,
        },
        rolled_back: mark == "S" || mark == "I",
    }
}

/// Sorting, not a set of pairs: hundreds of thousands of IDs.
pub fn assert_no_duplicates(all: &[Taken]) {
    let mut ids: Vec<u64> = all.iter().map(|t| t.id as u64).collect();
    ids.sort_unstable();
    if let Some(pair) = ids.windows(2).find(|p| p[0] == p[1]) {
        let twice: Vec<&Taken> = all.iter().filter(|t| t.id as u64 == pair[0]).collect();
        panic!("ID {} was issued twice: {twice:?}", pair[0] as i64);
    }
}

/// Every ID decoded by `snowflake decode --csv`, in order: its CSV, a
/// header row and one row an ID.
pub fn decode(layout: &[&str], all: &[Taken]) -> String {
    let input: String = all.iter().map(|t| format!("{}\n", t.id as u64)).collect();
    snowflake()
        .args(["decode", "--csv"])
        .args(layout)
        .arg("-")
        .write_stdin(input)
        .assert()
        .success()
        .stdout_text()
}

/// The layout `snowflake decode` is told of with `args` (`--layout NAME`
/// or a spec, and `--epoch`, `--tick-ms`), in the core.
fn core_layout(args: &[&str]) -> Layout {
    let value = |flag: &str| args.iter().position(|a| *a == flag).map(|i| args[i + 1]);
    let name = value("--layout").expect("a --layout");
    let mut layout = Layout::preset(name).unwrap_or_else(|| Layout::parse(name).unwrap());
    if let Some(epoch) = value("--epoch") {
        layout = layout.with_epoch_ms(epoch.parse().unwrap()).unwrap();
    }
    if let Some(tick) = value("--tick-ms") {
        layout = layout.with_tick_ms(tick.parse().unwrap()).unwrap();
    }
    layout
}

/// A pause of a client longer than this, and than a quarter of the run,
/// means it was not running: no busy machine holds a process that long.
const LONGEST_PAUSE_MS: i64 = 5_000;

/// How far the clients ran at once, from each one's span (from the clock
/// before its first ID to the clock after its last) and its pauses.
#[derive(Debug)]
pub struct AtOnce {
    /// The most clients whose spans hold one instant.
    pub most: usize,
    /// The whole run, from the first client's start to the last one's end.
    pub whole_ms: i64,
    /// The share of the whole run in which every client was running.
    pub all_share: f64,
    /// The longest a client went between two statements: from the clock
    /// after one to the clock before the next.
    pub longest_pause_ms: i64,
    /// The longest a statement took, from the clock before its ID to the
    /// clock after, ms: how wide the time check's bracket was.
    pub widest_ms: i64,
    /// Each client's span, ms from the first start.
    pub spans: Vec<(i64, i64)>,
}

impl AtOnce {
    pub fn of(taken: &[Vec<Taken>]) -> AtOnce {
        let spans: Vec<(i64, i64)> = taken
            .iter()
            .filter(|ids| !ids.is_empty())
            .map(|ids| (ids[0].before_ms, ids[ids.len() - 1].after_ms))
            .collect();
        // A sweep over the spans' ends: +1 at a start, -1 after an end;
        // at one instant, starts before ends.
        let mut edges: Vec<(i64, i32)> = spans
            .iter()
            .flat_map(|&(start, end)| [(start, -1), (end, 1)])
            .collect();
        edges.sort_unstable();
        let (mut running, mut most) = (0i32, 0i32);
        for (_, edge) in edges {
            running -= edge;
            most = most.max(running);
        }
        let first = spans.iter().map(|s| s.0).min().unwrap_or(0);
        let last = spans.iter().map(|s| s.1).max().unwrap_or(0);
        let all_from = spans.iter().map(|s| s.0).max().unwrap_or(0);
        let all_to = spans.iter().map(|s| s.1).min().unwrap_or(0);
        let whole = (last - first).max(1) as f64;
        AtOnce {
            most: most as usize,
            whole_ms: last - first,
            all_share: (all_to - all_from).max(0) as f64 / whole,
            longest_pause_ms: taken
                .iter()
                .flat_map(|ids| ids.windows(2).map(|p| p[1].before_ms - p[0].after_ms))
                .max()
                .unwrap_or(0),
            widest_ms: taken
                .iter()
                .flatten()
                .map(|t| t.after_ms - t.before_ms)
                .max()
                .unwrap_or(0),
            spans: spans.iter().map(|s| (s.0 - first, s.1 - first)).collect(),
        }
    }
}

impl std::fmt::Display for AtOnce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ran at once, all of them for {:.0} % of the {} ms run; the longest pause \
             between two statements of one client was {} ms, the longest statement {} ms",
            self.most,
            self.all_share * 100.0,
            self.whole_ms,
            self.longest_pause_ms,
            self.widest_ms
        )
    }
}
