package core

import (
	"context"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// OpenThread is a message that still owes something: its obligation is
// not none and some recipient has not acknowledged it.
type OpenThread struct {
	Message  Summary            `json:"message"`
	Receipts []protocol.Receipt `json:"receipts"`
}

// OpenThreads lists up to limit open threads, newest first, looking at no
// more than scan messages (a live view's bound on work per refresh).
// Read-only: no receipt moves.
func (r *Room) OpenThreads(ctx context.Context, limit, scan int) ([]OpenThread, error) {
	out := []OpenThread{}
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		seen := 0
		var ferr error
		err := tx.ScanMessages(storage.MessageQuery{}, func(m protocol.Message) bool {
			seen++
			if m.Obligation == protocol.ObligationNone {
				return seen < scan
			}
			rcs, err := tx.ReceiptsByMessage(m.MessageID)
			if err != nil {
				ferr = err
				return false
			}
			for _, rc := range rcs {
				if rc.State != protocol.ReceiptAcknowledged {
					out = append(out, OpenThread{Message: Summarise(&m), Receipts: rcs})
					break
				}
			}
			return len(out) < limit && seen < scan
		})
		if ferr != nil {
			return ferr
		}
		return err
	})
	return out, err
}
